/**
 * A serving pair for an endpoint given no certificate, as client-go's GenerateSelfSignedCertKey
 * and controller-runtime's metrics server make one: a throwaway CA and a leaf it signs for the
 * host names and IPs, valid a year. Clients verify it only by skipping verification or pinning.
 */
import { isIP } from 'node:net';
import { createCertificateAuthority } from './ca.js';
import { issueCertificate } from './issue.js';
import { generateKeyPair } from './keys.js';
import type { ServingPair } from './serving-cert-files.js';

const YEAR_MS = 365 * 86_400_000;

export async function selfSignedServingPair(commonName: string, names: readonly string[]): Promise<ServingPair> {
  const now = new Date();
  const ca = await createCertificateAuthority({ commonName: `${commonName}-ca@${Math.floor(now.getTime() / 1000)}`, validityDays: 365, now });
  const key = generateKeyPair();
  const certPem = await issueCertificate(ca, {
    subject: { commonName },
    publicKeyPem: key.publicKeyPem,
    dnsNames: names.filter((n) => isIP(n) === 0),
    ipAddresses: names.filter((n) => isIP(n) !== 0),
    usages: ['digital signature', 'key encipherment', 'server auth'],
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + YEAR_MS),
  });
  return { certPem, keyPem: key.privateKeyPem };
}
