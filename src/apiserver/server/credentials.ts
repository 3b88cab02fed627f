/**
 * First-start setup of a data directory: the cluster CA (it signs the serving certificate, the
 * admin client certificate, and — through the controller — kubelet and user client certificates,
 * so x509 authentication trusts exactly what the client signers issue), a separate kubelet-serving
 * CA (docs/architecture.md, "Trust domains"), a service-account signing key, and a kubeconfig for
 * kubectl and client-node. Later starts reuse them; a piece that is missing is made again (the
 * kubelet-serving CA of a directory made by an older release, among them), unless what is left shows
 * it was in use (CredentialsLostError): then the start refuses, as kubeadm does. The admin credential is
 * a client certificate (CN=kubernetes-admin, O=system:masters, as kubeadm's admin.conf) that expires
 * after a year, renewed with `kube-identity kubeconfig admin --renew`; there is no static admin token.
 *
 * API server replicas on etcd may share one directory and start at the same moment: whoever finds a
 * piece missing makes it holding DIR/.credentials.lock, and writes each file whole (rename), so they all
 * end up with one CA and one set of keys.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { createCertificateAuthority, type CaMaterial } from '../../pki/ca.js';
import { parseCertificatePem } from '../../pki/certificate.js';
import { issueCertificate } from '../../pki/issue.js';
import { generateKeyPair } from '../../pki/keys.js';
import { withCredentialsLock, writeWhole } from './credentials-lock.js';

export interface ServerCredentials {
  /** The cluster CA: the API server's serving CA (kube-root-ca.crt) and the client CA. */
  caPem: string;
  caKeyPem: string;
  /**
   * The kubelet-serving CA, kept apart from the cluster CA: a kubelet serving certificate must never
   * be accepted as the API server (in-cluster clients trust kube-root-ca.crt) nor as a client.
   */
  kubeletServingCaPem: string;
  kubeletServingCaKeyPem: string;
  /** The workload signer's CA (pod certificates, SPIFFE IDs): a trust domain apart from both CAs above. */
  workloadCaPem: string;
  workloadCaKeyPem: string;
  servingCertPem: string;
  servingKeyPem: string;
  /** Client certificate `kubernetes-admin` in system:masters: what the kubeconfig uses. */
  adminCertPem: string;
  adminKeyPem: string;
  /** Private key that signs service-account tokens. */
  serviceAccountKeyPem: string;
}

/** File names inside the data directory, exported so callers can point the controller at the CA. */
export const CREDENTIAL_FILES = {
  caPem: 'ca.crt',
  caKeyPem: 'ca.key',
  kubeletServingCaPem: 'kubelet-serving-ca.crt',
  kubeletServingCaKeyPem: 'kubelet-serving-ca.key',
  workloadCaPem: 'workload-ca.crt',
  workloadCaKeyPem: 'workload-ca.key',
  servingCertPem: 'apiserver.crt',
  servingKeyPem: 'apiserver.key',
  adminCertPem: 'admin.crt',
  adminKeyPem: 'admin.key',
  serviceAccountKeyPem: 'sa.key',
} as const;

const DAY_MS = 86_400_000;
const BACKDATE_MS = 5 * 60_000;

type Field = keyof ServerCredentials;

function isIp(name: string): boolean {
  return /^[\d.:]+$/.test(name);
}

async function leaf(
  ca: CaMaterial,
  subject: { commonName: string; organizations?: string[] },
  opts: { server: boolean; names?: string[] },
): Promise<{ certPem: string; keyPem: string }> {
  const key = generateKeyPair();
  const now = Date.now();
  const names = opts.names ?? [];
  const certPem = await issueCertificate(ca, {
    subject,
    publicKeyPem: key.publicKeyPem,
    dnsNames: names.filter((n) => !isIp(n)),
    ipAddresses: names.filter(isIp),
    usages: ['digital signature', 'key encipherment', opts.server ? 'server auth' : 'client auth'],
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + 365 * DAY_MS),
  });
  return { certPem, keyPem: key.privateKeyPem };
}

/** Loads the credentials in `dir`, creating whatever is missing (everything on first use). */
export async function ensureCredentials(dir: string, extraNames: string[] = []): Promise<ServerCredentials> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return readComplete(dir) ?? withCredentialsLock(dir, () => loadCredentials(dir, extraNames));
}

/** The text of `file`, undefined when it is missing or empty. */
function readIfThere(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8') || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function readAll(dir: string): Partial<ServerCredentials> {
  const found: Partial<ServerCredentials> = {};
  for (const [field, name] of Object.entries(CREDENTIAL_FILES) as [Field, string][]) found[field] = readIfThere(path.join(dir, name));
  return found;
}

/** Whether `keyPem` is the private key of `certPem` (not when either does not parse). */
function isKeyOf(certPem: string, keyPem: string): boolean {
  try {
    return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/**
 * Every file, read without the lock; undefined when one is missing, or when the admin key is not the
 * admin certificate's: `kubeconfig admin --renew` renames admin.key and then admin.crt holding the
 * lock, so a pair read meanwhile may not match, and is read again holding it.
 */
function readComplete(dir: string): ServerCredentials | undefined {
  const found = readAll(dir);
  if ((Object.keys(CREDENTIAL_FILES) as Field[]).some((field) => found[field] === undefined)) return undefined;
  const credentials = found as ServerCredentials;
  return isKeyOf(credentials.adminCertPem, credentials.adminKeyPem) ? credentials : undefined;
}

/**
 * A credential the directory shows was in use is gone, and making it again would silently replace
 * it: a new CA that nothing trusting the old one trusts, a new signing key that every service-account
 * token issued so far fails against. kubeadm refuses a CA it cannot load whole too.
 */
export class CredentialsLostError extends Error {
  override readonly name = 'CredentialsLostError';
  constructor(
    readonly dir: string,
    /** The files missing (or empty). */
    readonly missing: string[],
    /** The files that show they were in use. */
    readonly present: string[],
    why: string,
    remedy: string,
  ) {
    super(`data directory ${dir} has ${present.join(', ')} but no ${missing.join(' nor ')}: refusing to make a new ${why}. Restore ${missing.join(' and ')} from a backup, or, ${remedy}`);
  }
}

/** Each CA's files, and the pairs in the directory it issued. */
const CAS: { name: string; cert: Field; key: Field; issued: Field[] }[] = [
  { name: 'cluster CA', cert: 'caPem', key: 'caKeyPem', issued: ['servingCertPem', 'servingKeyPem', 'adminCertPem', 'adminKeyPem'] },
  { name: 'kubelet-serving CA', cert: 'kubeletServingCaPem', key: 'kubeletServingCaKeyPem', issued: [] },
  { name: 'workload CA', cert: 'workloadCaPem', key: 'workloadCaKeyPem', issued: [] },
];

/**
 * Throws CredentialsLostError, before anything is written, when a CA is missing (a file of its pair,
 * or both while the pairs it issued are there), or when sa.key is missing while ca.crt is
 * there: every release makes sa.key at the start that makes the CA, so tokens signed by it may be out.
 * A CA missing whole, with nothing it issued, is made: a first start, or an older release's directory.
 */
function refuseLost(dir: string, found: Partial<ServerCredentials>): void {
  const names = (fields: Field[], there: boolean): string[] => fields.filter((f) => (found[f] !== undefined) === there).map((f) => CREDENTIAL_FILES[f]);
  for (const ca of CAS) {
    const missing = names([ca.cert, ca.key], false);
    const present = names([ca.cert, ca.key, ...ca.issued], true);
    if (missing.length === 0 || present.length === 0) continue;
    const fresh = ca.cert === 'caPem' ? 'cluster identity' : ca.name;
    throw new CredentialsLostError(dir, missing, present, `${ca.name}, which whatever trusts the old one would not trust`, `to start a new ${fresh}, remove ${present.join(', ')}`);
  }
  if (found.serviceAccountKeyPem === undefined && found.caPem !== undefined) {
    const file = path.join(dir, CREDENTIAL_FILES.serviceAccountKeyPem);
    throw new CredentialsLostError(
      dir,
      [CREDENTIAL_FILES.serviceAccountKeyPem],
      [CREDENTIAL_FILES.caPem],
      'service-account signing key, against which every service-account token issued so far would fail',
      `to accept that, write a new private key there (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ${file})`,
    );
  }
}

/** Holding the lock: reads the credentials, making what is missing, unless what is missing was lost. */
async function loadCredentials(dir: string, extraNames: string[]): Promise<ServerCredentials> {
  const found = readAll(dir);
  refuseLost(dir, found);
  const write = (f: Field, text: string): string => {
    writeWhole(path.join(dir, CREDENTIAL_FILES[f]), text, CREDENTIAL_FILES[f].endsWith('.crt') ? 0o644 : 0o600);
    return text;
  };
  // Before the CA: a first start that dies between the two must not leave a ca.crt without sa.key.
  const serviceAccountKeyPem = found.serviceAccountKeyPem ?? write('serviceAccountKeyPem', generateKeyPair().privateKeyPem);
  const pair = async (cert: Field, key: Field, make: () => Promise<{ certPem: string; keyPem: string }>, usable?: (c: string, k: string) => boolean): Promise<[string, string]> => {
    const c = found[cert];
    const k = found[key];
    if (c && k && (!usable || usable(c, k))) return [c, k];
    const made = await make();
    return [write(cert, made.certPem), write(key, made.keyPem)];
  };
  const [caPem, caKeyPem] = await pair('caPem', 'caKeyPem', () => createCertificateAuthority({ commonName: 'kube-identity-ca' }));
  const ca: CaMaterial = { certPem: caPem, keyPem: caKeyPem };
  // Data directories of older releases have no kubelet-serving CA: it is made on their next start.
  const [kubeletServingCaPem, kubeletServingCaKeyPem] = await pair('kubeletServingCaPem', 'kubeletServingCaKeyPem', () =>
    createCertificateAuthority({ commonName: 'kube-identity-kubelet-serving-ca' }),
  );
  const [workloadCaPem, workloadCaKeyPem] = await pair('workloadCaPem', 'workloadCaKeyPem', () => createCertificateAuthority({ commonName: 'kube-identity-workload-ca' }));
  const servingNames = ['localhost', '127.0.0.1', '::1', ...extraNames];
  const [servingCertPem, servingKeyPem] = await pair('servingCertPem', 'servingKeyPem', () =>
    leaf(ca, { commonName: 'kube-apiserver' }, { server: true, names: servingNames }),
  );
  // A mismatched pair here is a renewal that died between its two renames: the CA issues a new one.
  const [adminCertPem, adminKeyPem] = await pair('adminCertPem', 'adminKeyPem', () => leaf(ca, ADMIN_SUBJECT, { server: false }), isKeyOf);
  return {
    caPem,
    caKeyPem,
    kubeletServingCaPem,
    kubeletServingCaKeyPem,
    workloadCaPem,
    workloadCaKeyPem,
    servingCertPem,
    servingKeyPem,
    adminCertPem,
    adminKeyPem,
    serviceAccountKeyPem,
  };
}

/** Where earlier versions kept a static admin token, which no longer authenticates anyone. */
export const RETIRED_ADMIN_TOKEN_FILE = 'admin.token';

const ADMIN_SUBJECT = { commonName: 'kubernetes-admin', organizations: ['system:masters'] };

/** When the admin client certificate stops working. */
export function adminCertificateExpiry(credentials: Pick<ServerCredentials, 'adminCertPem'>): Date {
  const [cert] = parseCertificatePem(credentials.adminCertPem);
  if (!cert) throw new Error('the admin certificate file holds no certificate');
  return cert.notAfter;
}

/**
 * Issues a new admin client certificate and key from the CA in `dir` (a year, as kubeadm's `certs
 * renew admin.conf`), replaces admin.crt and admin.key, and rewrites the kubeconfig with them,
 * keeping the server it names. The old certificate stays valid until it expires, as with kubeadm.
 */
export async function renewAdminCredentials(dir: string, kubeconfigFile = path.join(dir, 'kubeconfig')): Promise<{ kubeconfig: string; notAfter: Date }> {
  const server = kubeconfigServer(kubeconfigFile);
  const credentials = await withCredentialsLock(dir, async () => {
    const current = await loadCredentials(dir, []);
    const made = await leaf({ certPem: current.caPem, keyPem: current.caKeyPem }, ADMIN_SUBJECT, { server: false });
    writeWhole(path.join(dir, CREDENTIAL_FILES.adminKeyPem), made.keyPem, 0o600);
    writeWhole(path.join(dir, CREDENTIAL_FILES.adminCertPem), made.certPem, 0o644);
    return { ...current, adminCertPem: made.certPem, adminKeyPem: made.keyPem };
  });
  return { kubeconfig: writeKubeconfig(dir, server, credentials, kubeconfigFile), notAfter: adminCertificateExpiry(credentials) };
}

/** The server URL an admin kubeconfig written by writeKubeconfig names. */
function kubeconfigServer(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new Error(`no kubeconfig at ${file}: start the server once (kube-identity up or apiserver) so it writes one, or name it with --kubeconfig-out`);
  }
  const config = YAML.parse(text) as { clusters?: { cluster?: { server?: string } }[] };
  const server = config.clusters?.[0]?.cluster?.server;
  if (!server) throw new Error(`${file} names no server`);
  return server;
}

/** A kubeconfig for `url`, trusting `caPem`, as `user` with its client certificate and key. */
export function kubeconfigText(url: string, caPem: string, user: { name: string; certPem: string; keyPem: string }): string {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kube-identity', cluster: { server: url, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: user.name, user: { 'client-certificate-data': b64(user.certPem), 'client-key-data': b64(user.keyPem) } }],
    contexts: [{ name: 'kube-identity', context: { cluster: 'kube-identity', user: user.name } }],
    'current-context': 'kube-identity',
  });
}

/** Writes a kubeconfig (DIR/kubeconfig unless `file` is given) for `url` as the admin client certificate; returns its path. */
export function writeKubeconfig(dir: string, url: string, credentials: ServerCredentials, file = path.join(dir, 'kubeconfig')): string {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // Every replica writes it at each start, the other process of up may be reading it.
  writeWhole(file, kubeconfigText(url, credentials.caPem, { name: 'kubernetes-admin', certPem: credentials.adminCertPem, keyPem: credentials.adminKeyPem }), 0o600);
  return file;
}
