/**
 * Issuing bound service-account JWTs in kube-apiserver's layout (apiserver.md §5.2): header
 * `{alg, kid}` without `typ`, `aud` always an array, sorted claim keys (go-jose merges claims into
 * a map), and the `kubernetes.io` private claim naming the account and at most one bound object.
 */
import { randomUUID } from 'node:crypto';
import { CompactSign } from 'jose';
import type { SigningKey } from './sa-keys.js';
import { isRecord } from '../../lib/json.js';

export interface ObjectRefClaim {
  name?: string;
  uid?: string;
}

export interface KubernetesClaim {
  namespace: string;
  serviceaccount: ObjectRefClaim;
  pod?: ObjectRefClaim;
  secret?: ObjectRefClaim;
  node?: ObjectRefClaim;
  warnafter?: number;
}

export interface ServiceAccountClaims {
  aud: string[];
  exp: number;
  iat: number;
  iss: string;
  jti?: string;
  'kubernetes.io': KubernetesClaim;
  nbf: number;
  sub: string;
}

export interface IssueTokenOptions {
  key: SigningKey;
  issuer: string;
  audiences: string[];
  namespace: string;
  serviceAccount: { name: string; uid: string };
  pod?: ObjectRefClaim;
  secret?: ObjectRefClaim;
  node?: ObjectRefClaim;
  now: Date;
  /** Lifetime of the JWT (`exp - iat`). */
  expirationSeconds: number;
  /** Set for extended (kubelet projected) tokens: `kubernetes.io.warnafter = iat + warnAfterSeconds`. */
  warnAfterSeconds?: number;
}

export const SERVICE_ACCOUNT_USERNAME_PREFIX = 'system:serviceaccount:';

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USERNAME_PREFIX}${namespace}:${name}`;
}

/** `{namespace, name}` of a `system:serviceaccount:<ns>:<name>` username, or undefined. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USERNAME_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USERNAME_PREFIX.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

/** Drops empty name/uid fields, as Go's `omitempty` does; undefined when nothing is left. */
function ref(r: ObjectRefClaim | undefined): ObjectRefClaim | undefined {
  if (!r) return undefined;
  const out: ObjectRefClaim = {};
  if (r.name) out.name = r.name;
  if (r.uid) out.uid = r.uid;
  return Object.keys(out).length ? out : undefined;
}

/** JSON with object keys sorted at every level, as a Go map marshals. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    isRecord(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

export function buildClaims(o: IssueTokenOptions): ServiceAccountClaims {
  const iat = Math.floor(o.now.getTime() / 1000);
  const k8s: KubernetesClaim = { namespace: o.namespace, serviceaccount: ref(o.serviceAccount) ?? {} };
  const pod = ref(o.pod);
  const secret = ref(o.secret);
  const node = ref(o.node);
  if (pod) k8s.pod = pod;
  if (secret) k8s.secret = secret;
  if (node) k8s.node = node;
  if (o.warnAfterSeconds !== undefined) k8s.warnafter = iat + o.warnAfterSeconds;
  return {
    aud: [...o.audiences],
    exp: iat + o.expirationSeconds,
    iat,
    iss: o.issuer,
    jti: randomUUID(),
    'kubernetes.io': k8s,
    nbf: iat,
    sub: serviceAccountUsername(o.namespace, o.serviceAccount.name),
  };
}

/** Signs a bound token; returns the compact JWS and the claims it carries. */
export async function issueServiceAccountToken(
  o: IssueTokenOptions,
): Promise<{ token: string; claims: ServiceAccountClaims }> {
  const claims = buildClaims(o);
  const token = await new CompactSign(new TextEncoder().encode(sortedJson(claims)))
    .setProtectedHeader({ alg: o.key.alg, kid: o.key.kid })
    .sign(o.key.privateKey);
  return { token, claims };
}
