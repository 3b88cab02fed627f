/**
 * First-start setup of a data directory: a CA, a serving certificate for the loopback names, an
 * admin bearer token, and a kubeconfig for kubectl and client-node. Later starts reuse them.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { createCertificateAuthority } from '../pki/ca.js';
import { issueCertificate } from '../pki/issue.js';
import { generateKeyPair } from '../pki/keys.js';

export interface ServerIdentity {
  caPem: string;
  caKeyPem: string;
  servingCertPem: string;
  servingKeyPem: string;
  adminToken: string;
}

const FILES = {
  caPem: 'ca.crt',
  caKeyPem: 'ca.key',
  servingCertPem: 'apiserver.crt',
  servingKeyPem: 'apiserver.key',
  adminToken: 'admin.token',
} as const;
const DAY_MS = 86_400_000;

function readIdentity(dir: string): ServerIdentity | undefined {
  const paths = Object.values(FILES).map((f) => path.join(dir, f));
  if (!paths.every((p) => existsSync(p))) return undefined;
  const read = (f: string): string => readFileSync(path.join(dir, f), 'utf8');
  return {
    caPem: read(FILES.caPem),
    caKeyPem: read(FILES.caKeyPem),
    servingCertPem: read(FILES.servingCertPem),
    servingKeyPem: read(FILES.servingKeyPem),
    adminToken: read(FILES.adminToken).trim(),
  };
}

/** Loads the identity in `dir`, creating it on first use. */
export async function ensureIdentity(dir: string, extraNames: string[] = []): Promise<ServerIdentity> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const existing = readIdentity(dir);
  if (existing) return existing;
  const ca = await createCertificateAuthority({ commonName: 'kube-identity-ca' });
  const serving = generateKeyPair();
  const now = Date.now();
  const servingCertPem = await issueCertificate(ca, {
    subject: { commonName: 'kube-apiserver' },
    publicKeyPem: serving.publicKeyPem,
    dnsNames: ['localhost', ...extraNames.filter((n) => !/^[\d.:]+$/.test(n))],
    ipAddresses: ['127.0.0.1', '::1', ...extraNames.filter((n) => /^[\d.:]+$/.test(n))],
    usages: ['digital signature', 'key encipherment', 'server auth'],
    notBefore: new Date(now - 5 * 60_000),
    notAfter: new Date(now + 365 * DAY_MS),
  });
  const identity: ServerIdentity = {
    caPem: ca.certPem,
    caKeyPem: ca.keyPem,
    servingCertPem,
    servingKeyPem: serving.privateKeyPem,
    adminToken: randomBytes(32).toString('base64url'),
  };
  for (const [field, file] of Object.entries(FILES)) {
    const secret = file.endsWith('.key') || file.endsWith('.token');
    writeFileSync(path.join(dir, file), identity[field as keyof ServerIdentity], { mode: secret ? 0o600 : 0o644 });
  }
  return identity;
}

/** Writes DIR/kubeconfig pointing at `url` with the admin token; returns its path. */
export function writeKubeconfig(dir: string, url: string, identity: ServerIdentity): string {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'kube-identity', cluster: { server: url, 'certificate-authority-data': Buffer.from(identity.caPem).toString('base64') } },
    ],
    users: [{ name: 'admin', user: { token: identity.adminToken } }],
    contexts: [{ name: 'kube-identity', context: { cluster: 'kube-identity', user: 'admin' } }],
    'current-context': 'kube-identity',
  };
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(file, YAML.stringify(config), { mode: 0o600 });
  return file;
}
