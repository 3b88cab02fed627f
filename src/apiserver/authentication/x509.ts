/**
 * Client-certificate authentication as kube-apiserver's x509 authenticator does it: the TLS layer
 * only collects the peer's certificates (Node hands them over even when untrusted), and this
 * module decides: chain to the client CA through the presented intermediates, every certificate
 * within its validity, ExtKeyUsage compatible with clientAuth along the whole chain (Go's rule: a
 * certificate without the extension is unrestricted), then CN = user and O = groups, and the UID from
 * its subject attribute (AllowParsingUserUIDFromCertAuth, beta and on since 1.34).
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { UserInfo } from '../../api/meta.js';
import { BoundedMap } from '../../lib/bounded-map.js';
import { deepFreeze } from '../../lib/json.js';
import { certificateSubject } from '../../pki/name.js';
import { decodePemBlocks } from '../../pki/pem.js';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';
const MAX_CHAIN = 8;
const CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';

export interface X509AuthenticatorOptions {
  clientCaPem: string;
  now: () => Date;
}

export interface CertificateAuthenticator {
  /** undefined for no certificate or an empty CN; throws an Error when the certificate is not trusted. */
  authenticate(chainDer: readonly Uint8Array[]): UserInfo | undefined;
}

/** The CA certificates of a PEM bundle; non-certificate blocks are ignored. */
export function parseCaBundle(pem: string): X509Certificate[] {
  return decodePemBlocks(pem)
    .filter((b) => b.type === 'CERTIFICATE')
    .map((b) => new X509Certificate(Buffer.from(b.der)));
}

function parse(der: Uint8Array): X509Certificate {
  try {
    return new X509Certificate(Buffer.from(der));
  } catch {
    throw new Error('x509: malformed certificate');
  }
}

function issuedBy(child: X509Certificate, parent: X509Certificate): boolean {
  return child.checkIssued(parent) && child.verify(parent.publicKey);
}

function withinValidity(cert: X509Certificate, now: Date): boolean {
  const t = now.getTime();
  return Date.parse(cert.validFrom) <= t && t <= Date.parse(cert.validTo);
}

/** Go checks the requested usage against every certificate of the chain, root included. */
function allowsClientAuth(cert: X509Certificate): boolean {
  const eku = cert.keyUsage as string[] | undefined;
  return !eku || eku.length === 0 || eku.includes(CLIENT_AUTH) || eku.includes(ANY_EKU);
}

/** Depth-first search for a path leaf → intermediates → root; returns it leaf first. */
function buildPath(
  cert: X509Certificate,
  intermediates: X509Certificate[],
  roots: X509Certificate[],
  depth: number,
): X509Certificate[] | undefined {
  const root = roots.find((r) => issuedBy(cert, r));
  if (root) return [cert, root];
  if (depth >= MAX_CHAIN) return undefined;
  for (const next of intermediates) {
    if (next === cert || !next.ca || !issuedBy(cert, next)) continue;
    const rest = buildPath(
      next,
      intermediates.filter((i) => i !== next),
      roots,
      depth + 1,
    );
    if (rest) return [cert, ...rest];
  }
  return undefined;
}

/** Verifies the chain and returns the time window (ms) in which every certificate of its path is valid. */
function verifyChain(leaf: X509Certificate, intermediates: X509Certificate[], roots: X509Certificate[], now: Date): { from: number; to: number } {
  const path = buildPath(leaf, intermediates, roots, 0);
  if (!path) {
    const expired = !withinValidity(leaf, now);
    throw new Error(
      expired ? 'x509: certificate has expired or is not yet valid' : 'x509: certificate signed by unknown authority',
    );
  }
  if (!path.every((c) => withinValidity(c, now))) {
    throw new Error('x509: certificate has expired or is not yet valid');
  }
  if (!path.every(allowsClientAuth)) throw new Error('x509: certificate specifies an incompatible key usage');
  return {
    from: Math.max(...path.map((c) => Date.parse(c.validFrom))),
    to: Math.min(...path.map((c) => Date.parse(c.validTo))),
  };
}

/**
 * CN, every O and the UID of the subject, parsed structurally so no escaped text can inject a group. A
 * subject naming the UID more than once, or not as a string, is refused: it names nobody for certain.
 */
function subjectOf(der: Uint8Array): { cn: string; orgs: string[]; uid?: string } {
  const name = certificateSubject(der);
  const uids = name.uids ?? [];
  if (uids.length > 1) throw new Error('x509: the certificate subject names more than one user UID');
  const [uid] = uids;
  if (uids.length === 1 && uid === undefined) throw new Error('x509: the user UID in the certificate subject is not a string');
  return { cn: name.commonName ?? '', orgs: name.organizations, ...(uid === undefined ? {} : { uid }) };
}

interface Verified {
  user: UserInfo | undefined;
  from: number;
  to: number;
}

/** Chains verified on earlier connections, by the SHA-256 of their certificates: a fleet of nodes' worth. */
const REMEMBERED_CHAINS = 16_384;

const sha256 = (der: Uint8Array): string => createHash('sha256').update(der).digest('hex');

/**
 * The result for one presented chain is kept as long as the chain array lives (the server hands the
 * same array for every request of a TLS connection) and reused while `now` is inside the validity of
 * every certificate of its path: parsing and verifying the chain on each request cost ~30% of the
 * server's CPU under keep-alive load. It is also remembered by the chain's fingerprints, so a client
 * opening a new connection (each kubelet watch has its own; every client after a server restart) is
 * not parsed and verified again: a hash of each certificate instead of an X509Certificate parse and
 * a signature check per link (10% of a join's CPU in issue 29's profile). Roots are fixed for the
 * authenticator's life, so a remembered verdict stays true within its validity window.
 *
 * Every request of a chain is handed the same user, deep-frozen: nothing downstream changes a
 * user (a mutation throws), so no request can alter what the next one of that chain is.
 */
export function createX509Authenticator(o: X509AuthenticatorOptions): CertificateAuthenticator {
  const roots = parseCaBundle(o.clientCaPem);
  const verified = new WeakMap<readonly Uint8Array[], Verified>();
  const remembered = new BoundedMap<string, Verified>(REMEMBERED_CHAINS);
  return {
    authenticate(chainDer) {
      const [leafDer, ...rest] = chainDer;
      if (!leafDer) return undefined;
      const now = o.now().getTime();
      const hit = verified.get(chainDer);
      if (hit && hit.from <= now && now <= hit.to) return hit.user;
      const fingerprint = sha256(leafDer);
      const chainKey = rest.length === 0 ? fingerprint : [fingerprint, ...rest.map(sha256)].join(':');
      const known = remembered.get(chainKey);
      if (known && known.from <= now && now <= known.to) {
        verified.set(chainDer, known);
        return known.user;
      }
      const leaf = parse(leafDer);
      const { from, to } = verifyChain(leaf, rest.map(parse), roots, new Date(now));
      const { cn, orgs, uid } = subjectOf(leafDer);
      const user: UserInfo | undefined = cn
        ? { username: cn, ...(uid === undefined ? {} : { uid }), groups: orgs, extra: { [CREDENTIAL_ID]: [`X509SHA256=${fingerprint}`] } }
        : undefined;
      const result = { user: user && deepFreeze(user), from, to };
      verified.set(chainDer, result);
      remembered.set(chainKey, result);
      return result.user;
    },
  };
}
