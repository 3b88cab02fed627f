/**
 * First-start setup of a data directory: the cluster CA (it signs the serving certificate, the
 * admin client certificate, and — through the controller — kubelet and user client certificates,
 * so x509 authentication trusts exactly what the client signers issue), a separate kubelet-serving
 * CA (docs/architecture.md, "Trust domains"), a service-account signing key, an admin bearer token,
 * and a kubeconfig for kubectl and client-node. Later starts reuse them; a piece that is missing is
 * made again (the kubelet-serving CA of a directory made by an older release, among them).
 *
 * API server replicas on etcd may share one directory and start at the same moment: whoever finds a
 * piece missing makes it holding DIR/.credentials.lock, and writes each file whole (rename), so they all
 * end up with one CA and one set of keys.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { createCertificateAuthority, type CaMaterial } from '../../pki/ca.js';
import { issueCertificate } from '../../pki/issue.js';
import { generateKeyPair } from '../../pki/keys.js';

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
  servingCertPem: string;
  servingKeyPem: string;
  /** A static token for `admin` in system:masters (served through the token file). */
  adminToken: string;
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
  servingCertPem: 'apiserver.crt',
  servingKeyPem: 'apiserver.key',
  adminToken: 'admin.token',
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

const LOCK_FILE = '.credentials.lock';
/** A lock older than this was left by a process that died while creating the files. */
const STALE_LOCK_MS = 30_000;

/** Runs `create` holding DIR/.credentials.lock (taken over when stale). */
async function withCredentialsLock<T>(dir: string, create: () => Promise<T>): Promise<T> {
  const lock = path.join(dir, LOCK_FILE);
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
    if (since !== undefined && Date.now() - since > STALE_LOCK_MS) rmSync(lock, { force: true });
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  try {
    return await create();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Loads the credentials in `dir`, creating whatever is missing (everything on first use). */
export async function ensureCredentials(dir: string, extraNames: string[] = []): Promise<ServerCredentials> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const complete = (Object.values(CREDENTIAL_FILES) as string[]).every((f) => existsSync(path.join(dir, f)));
  return complete ? loadCredentials(dir, extraNames) : withCredentialsLock(dir, () => loadCredentials(dir, extraNames));
}

async function loadCredentials(dir: string, extraNames: string[]): Promise<ServerCredentials> {
  const file = (f: Field): string => path.join(dir, CREDENTIAL_FILES[f]);
  const read = (f: Field): string | undefined => (existsSync(file(f)) ? readFileSync(file(f), 'utf8') : undefined);
  const write = (f: Field, text: string): string => {
    const secret = !CREDENTIAL_FILES[f].endsWith('.crt');
    // Whole or not at all: another replica may read the directory meanwhile.
    const tmp = `${file(f)}.${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode: secret ? 0o600 : 0o644 });
    renameSync(tmp, file(f));
    return text;
  };

  let ca: CaMaterial;
  const caPem = read('caPem');
  const caKeyPem = read('caKeyPem');
  if (caPem && caKeyPem) ca = { certPem: caPem, keyPem: caKeyPem };
  else {
    ca = await createCertificateAuthority({ commonName: 'kube-identity-ca' });
    write('caPem', ca.certPem);
    write('caKeyPem', ca.keyPem);
  }
  const pair = async (cert: Field, key: Field, make: () => Promise<{ certPem: string; keyPem: string }>): Promise<[string, string]> => {
    const c = read(cert);
    const k = read(key);
    if (c && k) return [c, k];
    const made = await make();
    return [write(cert, made.certPem), write(key, made.keyPem)];
  };
  // Data directories of older releases have no kubelet-serving CA: it is made on their next start.
  const [kubeletServingCaPem, kubeletServingCaKeyPem] = await pair('kubeletServingCaPem', 'kubeletServingCaKeyPem', () =>
    createCertificateAuthority({ commonName: 'kube-identity-kubelet-serving-ca' }),
  );
  const servingNames = ['localhost', '127.0.0.1', '::1', ...extraNames];
  const [servingCertPem, servingKeyPem] = await pair('servingCertPem', 'servingKeyPem', () =>
    leaf(ca, { commonName: 'kube-apiserver' }, { server: true, names: servingNames }),
  );
  const [adminCertPem, adminKeyPem] = await pair('adminCertPem', 'adminKeyPem', () =>
    leaf(ca, { commonName: 'kubernetes-admin', organizations: ['system:masters'] }, { server: false }),
  );
  return {
    caPem: ca.certPem,
    caKeyPem: ca.keyPem,
    kubeletServingCaPem,
    kubeletServingCaKeyPem,
    servingCertPem,
    servingKeyPem,
    adminCertPem,
    adminKeyPem,
    adminToken: (read('adminToken') ?? write('adminToken', randomBytes(32).toString('base64url'))).trim(),
    serviceAccountKeyPem: read('serviceAccountKeyPem') ?? write('serviceAccountKeyPem', generateKeyPair().privateKeyPem),
  };
}

/** The token file (kube-apiserver's --token-auth-file CSV) that makes the admin token valid. */
export function adminTokenFile(credentials: ServerCredentials): string {
  return `${credentials.adminToken},admin,admin,"system:masters"\n`;
}

/** Writes a kubeconfig (DIR/kubeconfig unless `file` is given) for `url` as the admin client certificate; returns its path. */
export function writeKubeconfig(dir: string, url: string, credentials: ServerCredentials, file = path.join(dir, 'kubeconfig')): string {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kube-identity', cluster: { server: url, 'certificate-authority-data': b64(credentials.caPem) } }],
    users: [
      {
        name: 'kubernetes-admin',
        user: { 'client-certificate-data': b64(credentials.adminCertPem), 'client-key-data': b64(credentials.adminKeyPem) },
      },
    ],
    contexts: [{ name: 'kube-identity', context: { cluster: 'kube-identity', user: 'kubernetes-admin' } }],
    'current-context': 'kube-identity',
  };
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, YAML.stringify(config), { mode: 0o600 });
  // The mode above only applies to a new file; an existing kubeconfig may be anywhere (--kubeconfig-out).
  chmodSync(file, 0o600);
  return file;
}
