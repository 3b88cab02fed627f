/**
 * Reconcilers decide on the informer's copy without reading the CSR first: here the copy is stale on
 * purpose (the server moved on), and the write that carries its resourceVersion must be refused with
 * 409 (a requeue) rather than approve, issue or delete a second time.
 */
import { Registry } from 'prom-client';
import type { CertificateSigningRequest } from '../../src/api/certificates.js';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { classifyError } from '../../src/controller/client/errors.js';
import type { EventRecorder } from '../../src/controller/events/broadcaster.js';
import { Cache } from '../../src/controller/informer/cache.js';
import { ApproverReconciler } from '../../src/controller/approver/approver.js';
import { CaSource } from '../../src/controller/signer/ca-source.js';
import { Cleaner } from '../../src/controller/cleaner/cleaner.js';
import { CsrApi } from '../../src/controller/csr/csr-api.js';
import type { CsrReconcilerDeps } from '../../src/controller/csr/csr-deps.js';
import { ParsedRequests } from '../../src/controller/csr/parsed-requests.js';
import { SignerReconciler } from '../../src/controller/signer/signer.js';
import { signerPolicy } from '../../src/controller/signer/signer-policy.js';
import { FakeClock, realClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { CsrMetrics } from '../../src/metrics/csr.js';
import { tokenKubeConfig } from '../helpers/server.js';
import { approve, createCsr, getCsr, startHarness, TOKENS, type Harness } from './harness.js';

const KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
const ctx = { logger: silentLogger(), signal: new AbortController().signal, reconcileID: 'stale' };

describe('reconcilers on a stale informer copy (real server)', () => {
  let h: Harness;
  let client: KubeClient;
  let cache: Cache<CertificateSigningRequest>;
  let deps: CsrReconcilerDeps;
  const recorded: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    client = new KubeClient({ kubeConfig: tokenKubeConfig(h.server, TOKENS.admin), clock: realClock });
    cache = new Cache<CertificateSigningRequest>();
    const events: EventRecorder = { event: (_obj, _type, reason) => recorded.push(reason) };
    deps = { api: new CsrApi(client), csrs: cache, events, metrics: CsrMetrics.for(new Registry()), clock: realClock, requests: new ParsedRequests() };
  });
  afterAll(async () => {
    client.close();
    await h?.close();
  });

  const kubeletCsr = (name: string) =>
    createCsr(h, 'bootstrap', { name, signerName: KUBELET, usages: ['digital signature', 'client auth'], subject: { commonName: `system:node:${name}`, organizations: ['system:nodes'] } });
  const signer = () => new SignerReconciler({ ...deps, policy: signerPolicy(KUBELET), ca: new CaSource(h.caFiles), maxDurationMs: 3600_000, keyPolicy: { minRsaBits: 2048 } });

  it('the approver, on a pending copy of a CSR approved meanwhile, gets 409 and approves nothing', async () => {
    await kubeletCsr('stale-approve');
    cache.upsert(await getCsr(h, 'stale-approve'));
    await approve(h, 'stale-approve');
    const err = await new ApproverReconciler(deps).reconcile('stale-approve', ctx).then(() => undefined, (e: unknown) => e);
    expect(classifyError(err)).toBe('conflict');
    expect((await getCsr(h, 'stale-approve')).status?.conditions?.map((c) => c.reason)).toEqual(['KubectlApprove']);
    expect(recorded).not.toContain('AutoApproved');
  });

  it('a signer, on an approved copy of a CSR issued meanwhile, gets 409 and the first certificate stays', async () => {
    await kubeletCsr('stale-sign');
    await approve(h, 'stale-sign');
    const approved = await getCsr(h, 'stale-sign');
    cache.upsert(approved);
    expect(await signer().reconcile('stale-sign', ctx)).toBe('done');
    const first = (await getCsr(h, 'stale-sign')).status?.certificate;
    expect(first).toBeTruthy();
    // The cache has not caught up: a second signer (or this one, requeued) sees the approved copy again.
    expect(cache.get('stale-sign')?.metadata?.resourceVersion).toBe(approved.metadata?.resourceVersion);
    const err = await signer().reconcile('stale-sign', ctx).then(() => undefined, (e: unknown) => e);
    expect(classifyError(err)).toBe('conflict');
    expect((await getCsr(h, 'stale-sign')).status?.certificate).toBe(first);
    expect(recorded.filter((r) => r === 'CertificateIssued')).toHaveLength(1);
  });

  it('the cleaner, on a pending copy of a CSR changed meanwhile, deletes nothing', async () => {
    await kubeletCsr('stale-clean');
    cache.upsert(await getCsr(h, 'stale-clean'));
    await approve(h, 'stale-clean');
    // Pending for more than a day by this clock: the copy qualifies, the CSR as it is now does not.
    const cleaner = new Cleaner({ api: deps.api, csrs: cache, clock: new FakeClock(Date.now() + 25 * 3600_000), logger: silentLogger() });
    expect((await cleaner.runOnce()).map((d) => d.name)).not.toContain('stale-clean');
    expect((await getCsr(h, 'stale-clean')).metadata?.name).toBe('stale-clean');
  });
});
