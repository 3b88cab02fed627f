import 'reflect-metadata';
import type { CertificateSigningRequest, CertificateSigningRequestCondition } from '../../src/api/certificates.js';
import { cleanReason, DEFAULT_CLEANER_DURATIONS } from '../../src/controller/cleaner/cleaner-policy.js';
import { csrCacheTransform } from '../../src/controller/csr/csr-cache-transform.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { generateKeyPair } from '../../src/pki/keys.js';

const HOUR = 3600_000;
const now = Date.parse('2026-01-10T12:00:00Z');
const at = (msAgo: number): string => new Date(now - msAgo).toISOString().replace(/\.\d{3}Z$/, 'Z');

function csr(opts: { created?: number; conditions?: [string, number][]; certificate?: string }): CertificateSigningRequest {
  const conditions: CertificateSigningRequestCondition[] = (opts.conditions ?? []).map(([type, ago]) => ({
    type,
    status: 'True',
    lastUpdateTime: at(ago),
  }));
  return {
    metadata: { name: 'x', creationTimestamp: at(opts.created ?? 0) },
    spec: { request: '', signerName: 'kubernetes.io/kube-apiserver-client' },
    status: { conditions, ...(opts.certificate ? { certificate: opts.certificate } : {}) },
  };
}

async function certificate(notAfter: number): Promise<string> {
  const ca = await createCertificateAuthority({ commonName: 'test-ca', now: new Date(now - 10 * HOUR) });
  const pem = await issueCertificate(ca, {
    subject: { commonName: 'alice' },
    publicKeyPem: generateKeyPair().publicKeyPem,
    usages: ['client auth'],
    notBefore: new Date(now - 2 * HOUR),
    notAfter: new Date(notAfter),
  });
  return Buffer.from(pem).toString('base64');
}

describe('the cleaner deletes CSRs as kube-controller-manager does', () => {
  it.each([
    ['a pending CSR younger than 24 hours is kept', csr({ created: 23 * HOUR }), undefined],
    ['a pending CSR older than 24 hours is deleted', csr({ created: 25 * HOUR }), 'pending'],
    ['a denied CSR is deleted an hour after the denial', csr({ conditions: [['Denied', 61 * 60_000]] }), 'denied'],
    ['a denied CSR is kept within the hour', csr({ conditions: [['Denied', 59 * 60_000]] }), undefined],
    ['a failed CSR is deleted an hour after the failure', csr({ conditions: [['Failed', 2 * HOUR]] }), 'failed'],
    [
      'an approved CSR without a certificate is never deleted',
      csr({ created: 100 * HOUR, conditions: [['Approved', 50 * HOUR]] }),
      undefined,
    ],
    [
      'a CSR with only custom conditions is never deleted',
      csr({ created: 100 * HOUR, conditions: [['Custom', 50 * HOUR]] }),
      undefined,
    ],
  ])('%s', (_name, object, expected) => {
    expect(cleanReason(object, now)).toBe(expected);
  });

  it('an issued CSR is deleted an hour after approval', async () => {
    const cert = await certificate(now + 10 * HOUR);
    expect(cleanReason(csr({ conditions: [['Approved', 30 * 60_000]], certificate: cert }), now)).toBeUndefined();
    expect(cleanReason(csr({ conditions: [['Approved', 2 * HOUR]], certificate: cert }), now)).toBe('issued');
  });

  it('an issued CSR whose certificate has expired is deleted at once', async () => {
    const cert = await certificate(now - 60_000);
    expect(cleanReason(csr({ conditions: [['Approved', 60_000]], certificate: cert }), now)).toBe('expired');
  });

  it('an unparsable certificate counts as not expired', () => {
    const garbage = Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n').toString('base64');
    expect(cleanReason(csr({ conditions: [['Approved', 60_000]], certificate: garbage }), now)).toBeUndefined();
  });

  it('decides the same on the cached form of a CSR, which keeps only the certificate expiry', async () => {
    const transform = csrCacheTransform();
    const valid = await certificate(now + 10 * HOUR);
    const expired = await certificate(now - 60_000);
    const garbage = Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n').toString('base64');
    const cases: [string, number, string | undefined][] = [
      [valid, 30 * 60_000, undefined],
      [valid, 2 * HOUR, 'issued'],
      [expired, 60_000, 'expired'],
      [garbage, 60_000, undefined],
    ];
    for (const [certificate, approvedAgo, expected] of cases) {
      const object = csr({ conditions: [['Approved', approvedAgo]], certificate });
      const cached = transform(JSON.parse(JSON.stringify(object)) as CertificateSigningRequest);
      expect(cached.status?.certificate).toBeUndefined();
      expect(cleanReason(object, now)).toBe(expected);
      expect(cleanReason(cached, now)).toBe(expected);
    }
  });

  it('durations are configurable', () => {
    const short = { ...DEFAULT_CLEANER_DURATIONS, pendingMs: HOUR };
    expect(cleanReason(csr({ created: 2 * HOUR }), now, short)).toBe('pending');
  });
});
