/**
 * The signer with the API at its boundary faked: the real API server refuses a request whose
 * signature does not verify at create, so only here can a signer meet one. Its parse comes from the
 * memo the approver filled without verification; the signer must still refuse to sign it.
 */
import { Registry } from 'prom-client';
import { SIGNER_KUBE_APISERVER_CLIENT_KUBELET, type CertificateSigningRequest } from '../../api/certificates.js';
import { FakeClock } from '../../lib/clock.js';
import { silentLogger } from '../../log/logger.js';
import { CsrMetrics } from '../../metrics/csr.js';
import { createCertificateAuthority, prepareCaSigner, type CaSigner } from '../../pki/ca.js';
import { createCertificateRequestPem } from '../../pki/csr.js';
import { generateKeyPair } from '../../pki/keys.js';
import { decodePemBlocks, encodePem } from '../../pki/pem.js';
import type { EventRecorder } from '../events/broadcaster.js';
import { Cache } from '../informer/cache.js';
import { CsrApi } from '../csr/csr-api.js';
import { ParsedRequests } from '../csr/parsed-requests.js';
import { IssuedCertificates } from '../csr/issued-certificates.js';
import { certificateNotAfter } from '../csr/csr-conditions.js';
import { SignerReconciler } from './signer.js';
import { signerPolicy } from './signer-policy.js';

const HOUR_MS = 3600_000;

async function kubeletRequest(forged: boolean): Promise<string> {
  const pem = await createCertificateRequestPem({ privateKeyPem: generateKeyPair().privateKeyPem, commonName: 'system:node:w1', organizations: ['system:nodes'] });
  const der = Buffer.from(decodePemBlocks(pem)[0]!.der);
  if (forged) der[der.length - 1] = (der[der.length - 1] as number) ^ 0x01; // inside the signature
  return Buffer.from(encodePem('CERTIFICATE REQUEST', der), 'latin1').toString('base64');
}

describe('SignerReconciler with a parse shared by the approver', () => {
  let ca: CaSigner;
  beforeAll(async () => {
    ca = prepareCaSigner(await createCertificateAuthority({ commonName: 'signer-test-ca' }));
  });

  /** Runs one reconcile of an approved CSR carrying `request`; returns the /status body written. */
  async function signOnce(request: string, requests: ParsedRequests, registry = new Registry(), issued?: IssuedCertificates): Promise<CertificateSigningRequest> {
    const csr: CertificateSigningRequest = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'w1', uid: 'u1', resourceVersion: '5', creationTimestamp: '2030-01-01T00:00:00Z' },
      spec: { request, signerName: SIGNER_KUBE_APISERVER_CLIENT_KUBELET, usages: ['digital signature', 'client auth'], username: 'system:bootstrap:abc' },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'ok' }] },
    };
    const writes: { path: string; body: CertificateSigningRequest }[] = [];
    const raw = {
      requestJSON: <T>(): Promise<T> => Promise.resolve(structuredClone(csr) as T),
      write: (_m: string, path: string, body: unknown): Promise<void> => {
        writes.push({ path, body: body as CertificateSigningRequest });
        return Promise.resolve();
      },
    };
    const csrs = new Cache<CertificateSigningRequest>();
    csrs.upsert(structuredClone(csr));
    const clock = new FakeClock(Date.parse('2030-01-01T00:00:10Z'));
    const events: EventRecorder = { event: () => undefined };
    const signer = new SignerReconciler({
      policy: signerPolicy(SIGNER_KUBE_APISERVER_CLIENT_KUBELET),
      ca: { signer: () => ca },
      maxDurationMs: HOUR_MS,
      keyPolicy: { minRsaBits: 2048 },
      api: new CsrApi(raw),
      csrs,
      events,
      metrics: CsrMetrics.for(registry),
      clock,
      requests,
      issued,
    });
    expect(await signer.reconcile('w1', { logger: silentLogger(), signal: new AbortController().signal, reconcileID: 'r1' })).toBe('done');
    expect(writes.map((w) => w.path)).toEqual(['/apis/certificates.k8s.io/v1/certificatesigningrequests/w1/status']);
    return writes[0]!.body;
  }

  it('refuses a request whose signature does not verify, though the approver parsed it fine', async () => {
    const request = await kubeletRequest(true);
    const requests = new ParsedRequests();
    expect(requests.parse(request).subject.commonName).toBe('system:node:w1'); // what the approver did
    const written = await signOnce(request, requests);
    expect(written.status?.certificate ?? '').toBe('');
    expect(written.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({
      status: 'True',
      reason: 'SignerValidationFailure',
      message: 'unable to parse csr "w1": x509: ECDSA verification failure',
    });
  });

  it('signs the same kind of request when its signature verifies, reusing the shared parse', async () => {
    const request = await kubeletRequest(false);
    const requests = new ParsedRequests();
    requests.parse(request);
    const issued = new IssuedCertificates();
    const written = await signOnce(request, requests, undefined, issued);
    expect(written.status?.conditions?.map((c) => c.type)).toEqual(['Approved']);
    expect(Buffer.from(written.status?.certificate ?? '', 'base64').toString('latin1')).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(written.metadata?.resourceVersion).toBe('5');
    expect(requests.size).toBe(1);
    // It left the certificate's expiry for the cache, exactly what the certificate itself says.
    const certificate = written.status?.certificate ?? '';
    expect(issued.take(certificate)).toBe(certificateNotAfter(written));
    expect(issued.take(certificate)).toBeUndefined();
  });

  it('has every series of its signer from the start, so a first issuance or failure is an increase', async () => {
    const registry = new Registry();
    await signOnce(await kubeletRequest(true), new ParsedRequests(), registry);
    const text = await registry.metrics();
    const signer = `signer="${SIGNER_KUBE_APISERVER_CLIENT_KUBELET}"`;
    expect(text).toContain(`kube_identity_csr_issuances_total{${signer}} 0`);
    expect(text).toContain(`kube_identity_csr_issuance_latency_seconds_count{${signer}} 0`);
    expect(text).toContain(`kube_identity_csr_failures_total{${signer},reason="policy"} 0`);
    expect(text).toContain(`kube_identity_csr_failures_total{${signer},reason="unparseable"} 1`);
  });
});
