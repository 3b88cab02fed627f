/**
 * The workload signer through the real server and controller: a node creates PodCertificateRequests
 * for pods bound to it (the server's NodeRestriction checks them), the signer answers each once
 * through /status: an X.509 SVID naming only the pod's service account, verified against the
 * signer's ClusterTrustBundle; Denied (UnsupportedKeyType) for a key type its policy refuses;
 * nothing at all for another signer's requests.
 */
import crypto, { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Registry } from 'prom-client';
import type { PodCertificateRequest, PodCertificateRequestV1beta1 } from '../../src/api/pod-certificates.js';
import { classifyError } from '../../src/controller/client/errors.js';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { Cache } from '../../src/controller/informer/cache.js';
import { CaSource } from '../../src/controller/signer/ca-source.js';
import { WorkloadSignerReconciler } from '../../src/controller/workload-signer/workload-signer.js';
import { realClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { PodCertificateMetrics } from '../../src/metrics/pod-certificates.js';
import { tokenKubeConfig } from '../helpers/server.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import { startController, startHarness, TOKENS, waitFor, type Harness, type RunningController } from './harness.js';
import { ecKey, PCRS, PodWorld } from './pod-world.js';

const SIGNER = 'kube-identity.io/workload';
const HOUR = 3_600_000;

let h: Harness;
let ctl: RunningController;
let caPem: string;
let world: PodWorld;

const requestFor = (podName: string, serviceAccount: string, key: string, more: { signerName?: string; maxExpirationSeconds?: number } = {}): Promise<string> =>
  world.requestFor(podName, serviceAccount, key, { ...more, signerName: more.signerName ?? SIGNER });
const answered = (name: string): Promise<PodCertificateRequest> => world.answered(name);

beforeAll(async () => {
  h = await startHarness();
  const ca = await createCertificateAuthority({ commonName: 'workload-ca' });
  caPem = ca.certPem;
  writeFileSync(path.join(h.caDir, 'workload.crt'), ca.certPem);
  writeFileSync(path.join(h.caDir, 'workload.key'), ca.keyPem, { mode: 0o600 });
  world = new PodWorld(h);
  await world.setUp(['api', 'batch']);
  await world.pod('api-0', 'api', [SIGNER, 'example.com/other']);
  await world.pod('batch-0', 'batch', [SIGNER]);
  ctl = await startController(h, {
    workloadSignerNames: SIGNER,
    workloadSignerTrustDomain: 'example.org',
    workloadSignerCertFile: path.join(h.caDir, 'workload.crt'),
    workloadSignerKeyFile: path.join(h.caDir, 'workload.key'),
    workloadSignerMaxDuration: '5h',
    workloadSignerKeyTypes: 'ECDSAP256,ED25519',
  });
}, 60_000);

afterAll(async () => {
  await ctl?.stop();
  await h?.close();
});

it("issues the pod's service account identity and nothing the requester named, verifiable against the signer's ClusterTrustBundle", async () => {
  const key = ecKey();
  const name = await requestFor('api-0', 'api', key);
  const pcr = await answered(name);
  expect(pcr.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([['Issued', 'True', 'Issued']]);
  const chain = decodePemBlocks(pcr.status?.certificateChain ?? '');
  expect(chain.map((b) => b.type)).toEqual(['CERTIFICATE']);
  const cert = new X509Certificate(Buffer.from(chain[0]?.der ?? []));
  // No subject at all: the SPIFFE ID is the only name.
  expect([cert.subject ?? '', cert.subjectAltName]).toEqual(['', 'URI:spiffe://example.org/ns/default/sa/api']);
  expect(cert.publicKey.export({ type: 'spki', format: 'der' })).toEqual(crypto.createPublicKey(key).export({ type: 'spki', format: 'der' }));
  expect(cert.ca).toBe(false);
  // The times the status states are the certificate's: the policy's 5 h, below the request's 10 h.
  const [notBefore, notAfter, refresh] = [pcr.status?.notBefore, pcr.status?.notAfter, pcr.status?.beginRefreshAt].map((t) => Date.parse(t ?? ''));
  expect([new Date(cert.validFrom).getTime(), new Date(cert.validTo).getTime()]).toEqual([notBefore, notAfter]);
  expect((notAfter as number) - (notBefore as number)).toBe(5 * HOUR);
  expect((refresh as number) - (notBefore as number)).toBeGreaterThanOrEqual(2.5 * HOUR);
  expect((refresh as number) - (notBefore as number)).toBeLessThanOrEqual(4 * HOUR);

  // The node reads the bundle as the kubelet would for a projected volume; it holds the workload CA, not the cluster's.
  type Bundle = { metadata: { name: string }; spec: { trustBundle: string } };
  const items = await waitFor('the published bundle', async () => {
    const bundles = await h.call('node9', 'GET', `/apis/certificates.k8s.io/v1beta1/clustertrustbundles?fieldSelector=spec.signerName%3D${encodeURIComponent(SIGNER)}`);
    const found = (bundles.body.items ?? []) as Bundle[];
    return found.length > 0 ? found : undefined;
  });
  expect(items.map((b) => b.metadata.name)).toEqual(['kube-identity.io:workload:kube-identity']);
  const anchor = new X509Certificate(items[0]?.spec.trustBundle ?? '');
  expect(anchor.fingerprint256).toBe(new X509Certificate(caPem).fingerprint256);
  expect([cert.checkIssued(anchor), cert.verify(anchor.publicKey)]).toEqual([true, true]);
  const clusterCa = new X509Certificate(await import('node:fs').then((fs) => fs.readFileSync(h.caFiles.certFile)));
  expect(cert.checkIssued(clusterCa)).toBe(false);
});

it('lives as long as the request allows when that is shorter than the policy', async () => {
  const pcr = await answered(await requestFor('batch-0', 'batch', ecKey(), { maxExpirationSeconds: 3600 }));
  expect(Date.parse(pcr.status?.notAfter ?? '') - Date.parse(pcr.status?.notBefore ?? '')).toBe(HOUR);
  expect(new X509Certificate(pcr.status?.certificateChain ?? '').subjectAltName).toBe('URI:spiffe://example.org/ns/default/sa/batch');
});

it('denies a key type its policy refuses with UnsupportedKeyType, and leaves other signers alone', async () => {
  const other = await requestFor('api-0', 'api', ecKey(), { signerName: 'example.com/other' });
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 3072 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const pcr = await answered(await requestFor('api-0', 'api', rsa));
  expect(pcr.status?.conditions?.map((c) => [c.type, c.reason, c.message])).toEqual([
    ['Denied', 'UnsupportedKeyType', 'signer kube-identity.io/workload does not issue certificates for RSA3072; use one of ECDSAP256, ED25519'],
  ]);
  expect(pcr.status?.certificateChain).toBeUndefined();
  const untouched = await h.call('admin', 'GET', `${PCRS}/${other}`);
  expect((untouched.body as unknown as PodCertificateRequest).status?.conditions ?? []).toEqual([]);
});

it('counts and records each decision as the CSR signer does', async () => {
  const metrics = await waitFor('the decisions counted', async () => {
    const text = await ctl.registry.metrics();
    return /kube_identity_pcr_denials_total\{signer="kube-identity.io\/workload",reason="UnsupportedKeyType"\} 1/.test(text) ? text : undefined;
  });
  expect(metrics).toMatch(/^kube_identity_pcr_issuances_total\{signer="kube-identity.io\/workload"\} 2$/m);
  expect(metrics).toMatch(/^kube_identity_pcr_failures_total\{signer="kube-identity.io\/workload",reason="ca-expiring"\} 0$/m);
  expect(metrics).toMatch(/^kube_identity_signer_ca_expiry_timestamp_seconds\{signer="kube-identity.io\/workload"\} \d+/m);
  expect(metrics).toMatch(/^workqueue_adds_total\{name="workload-signer"\} [1-9]/m);
  const events = await waitFor('the Events', async () => {
    const res = await h.call('admin', 'GET', '/api/v1/namespaces/default/events');
    const items = (res.body.items ?? []) as { reason: string; type: string; regarding?: { kind: string }; involvedObject?: { kind: string } }[];
    const mine = items.filter((e) => (e.regarding ?? e.involvedObject)?.kind === 'PodCertificateRequest');
    return mine.length >= 3 ? mine : undefined;
  });
  expect(events.map((e) => [e.type, e.reason]).sort()).toEqual([
    ['Normal', 'Issued'],
    ['Normal', 'Issued'],
    ['Warning', 'UnsupportedKeyType'],
  ]);
});

it('gives nothing to anyone but a node asking for its own pods: an unknown token, a join token and a namespace user cannot even ask', async () => {
  const spec = { signerName: SIGNER, podName: 'api-0', serviceAccountName: 'api', nodeName: 'worker-9' };
  const statuses = await Promise.all(
    [{ token: 'no-such-token' }, 'bootstrap' as const, 'alice' as const].map(async (who) => (await h.call(who, 'POST', PCRS, { metadata: { generateName: 'x-' }, spec })).status),
  );
  expect(statuses).toEqual([401, 403, 403]);
});

it('decides on the cached copy: a copy the server has moved past gets 409 (a requeue) and writes nothing', async () => {
  // Another signer name than the running controller's, so only this reconciler acts on the request.
  const name = await requestFor('api-0', 'api', ecKey(), { signerName: 'example.com/other' });
  const copy = (await h.call('admin', 'GET', `${PCRS}/${name}`)).body as unknown as PodCertificateRequestV1beta1;
  const moved = await h.call('admin', 'PUT', `${PCRS}/${name}`, { ...copy, metadata: { ...copy.metadata, labels: { touched: 'yes' } } });
  expect(moved.status).toBe(200);
  const cache = new Cache<PodCertificateRequestV1beta1>();
  cache.upsert(copy);
  const client = new KubeClient({ kubeConfig: tokenKubeConfig(h.server, TOKENS.admin), clock: realClock });
  const events: string[] = [];
  try {
    const reconciler = new WorkloadSignerReconciler({
      signerNames: new Set(['example.com/other']),
      trustDomain: 'example.org',
      ca: new CaSource({ certFile: path.join(h.caDir, 'workload.crt'), keyFile: path.join(h.caDir, 'workload.key') }),
      maxDurationMs: HOUR,
      keyTypes: new Set(['ECDSAP256']),
      pcrs: cache,
      client,
      events: { event: (_obj, _type, reason) => events.push(reason) },
      metrics: PodCertificateMetrics.for(new Registry()),
      clock: realClock,
    });
    const ctx = { logger: silentLogger(), signal: new AbortController().signal, reconcileID: 'stale' };
    const err = await reconciler.reconcile(`default/${name}`, ctx).then(() => undefined, (e: unknown) => e);
    expect(classifyError(err)).toBe('conflict');
  } finally {
    client.close();
  }
  const after = (await h.call('admin', 'GET', `${PCRS}/${name}`)).body as unknown as PodCertificateRequest;
  expect([after.status?.conditions ?? [], after.status?.certificateChain, events]).toEqual([[], undefined, []]);
});

it('marks a request Failed when its CA ends within the hour, and picks a rotated CA up from the files', async () => {
  // A rotation to a CA that ends in 30 minutes: too short for the API's 1 h minimum lifetime.
  const dying = await createCertificateAuthority({ commonName: 'dying-workload-ca', validityDays: 1, now: new Date(Date.now() - 23.5 * HOUR) });
  writeFileSync(path.join(h.caDir, 'workload.key'), dying.keyPem, { mode: 0o600 });
  writeFileSync(path.join(h.caDir, 'workload.crt'), dying.certPem);
  // The bundle holds the new CA beside the old one once the files are read again.
  await waitFor('the rotated CA published', async () => {
    const res = await h.call('admin', 'GET', '/apis/certificates.k8s.io/v1beta1/clustertrustbundles/kube-identity.io:workload:kube-identity');
    const pem = (res.body.spec as { trustBundle?: string } | undefined)?.trustBundle ?? '';
    return pem.split('BEGIN CERTIFICATE').length - 1 === 2 ? pem : undefined;
  });
  const pcr = await answered(await requestFor('batch-0', 'batch', ecKey()));
  expect(pcr.status?.conditions?.map((c) => [c.type, c.reason])).toEqual([['Failed', 'SignerFailure']]);
  expect(pcr.status?.conditions?.[0]?.message).toMatch(/^the signer's CA expires at .+, less than an hour from now: a pod certificate must live at least 1h$/);
  expect(pcr.status?.certificateChain).toBeUndefined();
  // Counted once the controller has the answer to its write, which may come after our read of it.
  const failures = /^kube_identity_pcr_failures_total\{signer="kube-identity.io\/workload",reason="ca-expiring"\} 1$/m;
  expect(await waitFor('the failure counted', async () => (failures.test(await ctl.registry.metrics()) ? true : undefined))).toBe(true);
}, 30_000);
