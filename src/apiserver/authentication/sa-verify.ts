/**
 * Validating bound service-account JWTs (apiserver.md §5.3): the unverified issuer decides whether
 * the token is ours at all; then signature (algorithm pinned per key, keys as KeyObjects so an
 * HS256 forgery keyed with the public key cannot verify), issuer, audiences, time with upstream's
 * 60 s leeway, and finally liveness of the account and bound object, with upstream's messages.
 */
import { compactVerify, decodeProtectedHeader } from 'jose';
import type { KObject, UserInfo } from '../../api/meta.js';
import type { ObjectReader } from './types.js';
import { NODES, PODS, SECRETS, SERVICE_ACCOUNTS } from './resource-infos.js';
import { isRecord, record, str, strings } from '../../lib/json.js';
import type { VerificationKey } from './sa-keys.js';
import type { KubernetesClaim, ObjectRefClaim, ServiceAccountClaims } from './sa-token.js';
import { serviceAccountUsername } from './sa-token.js';
import { intersect, type TokenAuthenticator, type TokenResponse } from './token-union.js';
import { then, type MaybePromise } from '../../lib/maybe-promise.js';
import { type TokenMemo, VerifiedTokens } from './verified-tokens.js';

export const LEEWAY_SECONDS = 60;
const MAX_KID_LENGTH = 128;

export interface VerifyOptions {
  keys: readonly VerificationKey[];
  issuers: readonly string[];
  /** Target audiences; the token must share at least one. */
  audiences: readonly string[];
  now: Date;
  /** Claims of tokens whose signature already verified against `keys`, by token text. */
  verified?: TokenMemo;
}

/**
 * How many verified tokens an authenticator remembers. Checking the signature was most of a
 * TokenReview's CPU, and its verdict depends only on the token's bytes and the keys (fixed for the
 * process); the issuer, audience, time and liveness checks still run on every review, so a revoked
 * or expired token is refused at once. The key is the token's whole text: a token differing in any
 * byte, its signature included, is verified afresh.
 */
const VERIFIED_MEMO_SIZE = 4096;

/** Past `exp` and its leeway: such a token is refused, and is not kept in the memo either. */
function pastExpiry(claims: ServiceAccountClaims, now: Date): boolean {
  return Math.floor(now.getTime() / 1000) - LEEWAY_SECONDS > claims.exp;
}

/** The claims `o.verified` holds for the token while it is not past its expiry. */
function rememberedClaims(token: string, o: VerifyOptions): ServiceAccountClaims | undefined {
  const known = o.verified?.get(token);
  if (!known || !pastExpiry(known, o.now)) return known;
  o.verified?.delete(token);
  return undefined;
}

/** The token's claims once its signature verified, then remembered in `o.verified`; undefined: not ours. */
async function signedClaims(token: string, o: VerifyOptions): Promise<ServiceAccountClaims | undefined> {
  if (ownIssuer(token, o.issuers) === undefined) return undefined;
  const claims = parseClaims(await verifySignature(token, o.keys));
  if (o.verified && !pastExpiry(claims, o.now)) o.verified.set(token, claims);
  return claims;
}

const INVALID = 'token could not be validated.';

/** Go's `%q` of a []string: `["a" "b"]`. */
function goQuoted(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

function decodeSegment(seg: string): unknown {
  try {
    return JSON.parse(Buffer.from(seg, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The unverified issuer when the token looks like one of ours; undefined means "not mine". */
function ownIssuer(token: string, issuers: readonly string[]): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || token.startsWith('{')) return undefined;
  const iss = str(record(decodeSegment(parts[1] ?? '')).iss);
  return iss !== undefined && issuers.includes(iss) ? iss : undefined;
}

async function verifySignature(token: string, keys: readonly VerificationKey[]): Promise<Uint8Array> {
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    kid = typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    throw new Error('square/go-jose: compact JWS format must have three parts');
  }
  const candidates = kid === undefined ? keys : keys.filter((k) => kid.length <= MAX_KID_LENGTH && k.kid === kid);
  if (candidates.length === 0) throw new Error('invalid signature, no keys found');
  for (const k of candidates) {
    try {
      return (await compactVerify(token, k.publicKey, { algorithms: [k.alg] })).payload;
    } catch {
      // try the next key with the same kid; all failing is one error below
    }
  }
  throw new Error('square/go-jose: error in cryptographic primitive');
}

/** An object reference claim (`{name, uid}`, both optional strings); undefined when it is not one. */
function refClaim(v: unknown): ObjectRefClaim | undefined {
  if (!isRecord(v)) return undefined;
  const { name, uid } = v;
  if ((name !== undefined && typeof name !== 'string') || (uid !== undefined && typeof uid !== 'string')) return undefined;
  const ref: ObjectRefClaim = {};
  if (name !== undefined) ref.name = name;
  if (uid !== undefined) ref.uid = uid;
  return ref;
}

/** The private claim: a namespace and a service account, optionally bound to a pod, secret or node. */
function kubernetesClaim(v: unknown): KubernetesClaim | undefined {
  if (!isRecord(v) || typeof v.namespace !== 'string') return undefined;
  const serviceaccount = refClaim(v.serviceaccount);
  if (!serviceaccount) return undefined;
  const claim: KubernetesClaim = { namespace: v.namespace, serviceaccount };
  for (const kind of ['pod', 'secret', 'node'] as const) {
    // null is Go's nil pointer: no binding.
    if (v[kind] === undefined || v[kind] === null) continue;
    const ref = refClaim(v[kind]);
    if (!ref) return undefined;
    claim[kind] = ref;
  }
  if (typeof v.warnafter === 'number') claim.warnafter = v.warnafter;
  return claim;
}

/**
 * Shape-checks verified claims, as Go's decoding into its claim structs does; bound tokens must
 * carry every time claim and the private claim.
 */
function parseClaims(payload: Uint8Array): ServiceAccountClaims {
  const raw = record(decodeSegment(Buffer.from(payload).toString('base64url')));
  const { iss, sub, exp, iat, nbf, jti } = raw;
  const aud = typeof raw.aud === 'string' ? [raw.aud] : strings(raw.aud);
  const k8s = kubernetesClaim(raw['kubernetes.io']);
  if (
    typeof iss !== 'string' ||
    typeof sub !== 'string' ||
    typeof exp !== 'number' ||
    typeof iat !== 'number' ||
    typeof nbf !== 'number' ||
    (jti !== undefined && jti !== null && typeof jti !== 'string') ||
    aud.length === 0 ||
    !k8s
  ) {
    throw new Error(INVALID);
  }
  const claims: ServiceAccountClaims = { aud, exp, iat, iss, 'kubernetes.io': k8s, nbf, sub };
  if (typeof jti === 'string') claims.jti = jti;
  return claims;
}

/** Issuer, audience and time checks of signed claims; returns the audiences they share with the target. */
function checkClaims(claims: ServiceAccountClaims, o: VerifyOptions): string[] {
  if (!o.issuers.includes(claims.iss)) throw new Error(`token issuer "${claims.iss}" is invalid`);
  const audiences = intersect(claims.aud, o.audiences);
  if (audiences.length === 0) {
    throw new Error(`token audiences ${goQuoted(claims.aud)} is invalid for the target audiences ${goQuoted(o.audiences)}`);
  }
  const now = Math.floor(o.now.getTime() / 1000);
  if (pastExpiry(claims, o.now)) throw new Error('service account token has expired');
  if (now + LEEWAY_SECONDS < claims.nbf) throw new Error('service account token is not valid yet');
  if (now + LEEWAY_SECONDS < claims.iat) throw new Error('service account token is issued in the future');
  const k8s = claims['kubernetes.io'];
  if (!k8s.serviceaccount.name || claims.sub !== serviceAccountUsername(k8s.namespace, k8s.serviceaccount.name)) {
    throw new Error(INVALID);
  }
  return audiences;
}

/**
 * Signature, issuer, audience and time checks; returns the verified claims and the audiences they
 * share with the target. Throws an Error carrying upstream's message; undefined means "not mine".
 */
export async function verifyServiceAccountToken(
  token: string,
  o: VerifyOptions,
): Promise<{ claims: ServiceAccountClaims; audiences: string[] } | undefined> {
  const claims = rememberedClaims(token, o) ?? (await signedClaims(token, o));
  return claims && { claims, audiences: checkClaims(claims, o) };
}

export interface ServiceAccountAuthenticatorOptions {
  keys: readonly VerificationKey[];
  issuers: readonly string[];
  objects: ObjectReader;
  now: () => Date;
}

const GRACE_MS = LEEWAY_SECONDS * 1000;

/** The live object a bound claim names must exist, not be long deleting, and keep its uid. */
function checkBound(live: KObject | undefined, kind: 'secret' | 'pod' | 'node', ref: ObjectRefClaim, now: Date): void {
  if (!live || deletedBefore(live, now, GRACE_MS)) throw new Error('service account token has been invalidated');
  const uid = live.metadata?.uid ?? '';
  const claimName = kind === 'secret' ? 'service account secret ref claim' : `service account ${kind} ref claim`;
  if (ref.uid && ref.uid !== uid) throw new Error(`${kind} UID (${uid}) does not match ${claimName} (${ref.uid})`);
}

function extraOf(k8s: KubernetesClaim, jti: string | undefined): Record<string, string[]> {
  const extra: Record<string, string[]> = {};
  if (k8s.pod?.name && k8s.pod.uid) {
    extra['authentication.kubernetes.io/pod-name'] = [k8s.pod.name];
    extra['authentication.kubernetes.io/pod-uid'] = [k8s.pod.uid];
  }
  if (k8s.node?.name) {
    extra['authentication.kubernetes.io/node-name'] = [k8s.node.name];
    if (k8s.node.uid) extra['authentication.kubernetes.io/node-uid'] = [k8s.node.uid];
  }
  if (jti) extra['authentication.kubernetes.io/credential-id'] = [`JTI=${jti}`];
  return extra;
}

/**
 * The user of each verified claims. Once the liveness checks pass it is a function of the claims
 * alone (its uid is the account's, which they require to equal the claim's), so it is built once,
 * deep-frozen, and shared by every use of the token, as x509's user is per certificate; the checks
 * still run on every use, so nothing about a revoked token is remembered.
 */
const users = new WeakMap<ServiceAccountClaims, UserInfo>();

function userOf(claims: ServiceAccountClaims): UserInfo {
  let user = users.get(claims);
  if (user) return user;
  const k8s = claims['kubernetes.io'];
  const ns = k8s.namespace;
  user = {
    username: serviceAccountUsername(ns, k8s.serviceaccount.name ?? ''),
    uid: k8s.serviceaccount.uid ?? '',
    groups: Object.freeze(['system:serviceaccounts', `system:serviceaccounts:${ns}`]) as string[],
  };
  const extra = extraOf(k8s, claims.jti);
  if (Object.keys(extra).length) {
    for (const values of Object.values(extra)) Object.freeze(values);
    user.extra = Object.freeze(extra);
  }
  users.set(claims, Object.freeze(user));
  return user;
}

/** The token's account, its bound Secret, and its bound Pod or else Node, as they are now. */
type Live = [KObject | undefined, KObject | undefined, KObject | undefined];

/** The token's account, and the objects it is bound to: the Secret, and the Pod or else the Node. */
function readLive(objects: ObjectReader, k8s: KubernetesClaim): Promise<Live> {
  const ns = k8s.namespace;
  return Promise.all([
    objects.get(SERVICE_ACCOUNTS, ns, k8s.serviceaccount.name ?? ''),
    k8s.secret && objects.get(SECRETS, ns, k8s.secret.name ?? ''),
    k8s.pod ? objects.get(PODS, ns, k8s.pod.name ?? '') : k8s.node && objects.get(NODES, undefined, k8s.node.name ?? ''),
  ]);
}

/**
 * The same objects read at once, when the reader can answer each of them now (a store whose reads
 * are served from memory, which every acknowledged write has reached: as exact as `get`); undefined
 * when any must be read with `get`.
 */
function readLiveNow(objects: ObjectReader, k8s: KubernetesClaim): Live | undefined {
  if (!objects.readNow) return undefined;
  const ns = k8s.namespace;
  const sa = objects.readNow(SERVICE_ACCOUNTS, ns, k8s.serviceaccount.name ?? '');
  const secret = k8s.secret ? objects.readNow(SECRETS, ns, k8s.secret.name ?? '') : null;
  const podOrNode = k8s.pod ? objects.readNow(PODS, ns, k8s.pod.name ?? '') : k8s.node ? objects.readNow(NODES, undefined, k8s.node.name ?? '') : null;
  if (sa === undefined || secret === undefined || podOrNode === undefined) return undefined;
  return [sa ?? undefined, secret ?? undefined, podOrNode ?? undefined];
}

/** The account must exist, not be long deleting, and keep the claim's uid. */
function checkAccount(sa: KObject | undefined, k8s: KubernetesClaim, now: Date): void {
  const ns = k8s.namespace;
  const saName = k8s.serviceaccount.name ?? '';
  if (!sa) throw new Error(`serviceaccounts "${saName}" not found`);
  if (deletedBefore(sa, now, GRACE_MS)) throw new Error(`service account ${ns}/${saName} has been deleted`);
  const saUid = sa.metadata?.uid ?? '';
  if (k8s.serviceaccount.uid !== saUid) {
    throw new Error(`service account UID (${saUid}) does not match claim (${k8s.serviceaccount.uid ?? ''})`);
  }
}

/**
 * The token's user once its account and bound objects are checked live, as they are on every use,
 * in upstream's order: the account, the bound Secret, then the bound Pod or (for a token bound to
 * no pod) Node. Their reads start together; read from memory, they are checked at once.
 */
function liveUser(objects: ObjectReader, claims: ServiceAccountClaims, now: Date): MaybePromise<UserInfo> {
  const k8s: KubernetesClaim = claims['kubernetes.io'];
  const live = readLiveNow(objects, k8s);
  return live ? checkLive(claims, live, now) : readLive(objects, k8s).then((read) => checkLive(claims, read, now));
}

function checkLive(claims: ServiceAccountClaims, [sa, secret, podOrNode]: Live, now: Date): UserInfo {
  const k8s: KubernetesClaim = claims['kubernetes.io'];
  checkAccount(sa, k8s, now);
  if (k8s.secret) checkBound(secret, 'secret', k8s.secret, now);
  if (k8s.pod) checkBound(podOrNode, 'pod', k8s.pod, now);
  else if (k8s.node) checkBound(podOrNode, 'node', k8s.node, now);
  return userOf(claims);
}

export function createServiceAccountTokenAuthenticator(o: ServiceAccountAuthenticatorOptions): TokenAuthenticator {
  const signed = new VerifiedTokens(VERIFIED_MEMO_SIZE);
  /** The claims checked, then the live objects read: at once when the reader answers at once (throws, then, for a refusal). */
  const checkedUser = (claims: ServiceAccountClaims, v: VerifyOptions): MaybePromise<TokenResponse> => {
    const shared = checkClaims(claims, v);
    return then(liveUser(o.objects, claims, v.now), (user) => ({ user, audiences: shared }));
  };
  return {
    authenticateToken(token, audiences): MaybePromise<TokenResponse | undefined> {
      const now = o.now();
      const v: VerifyOptions = { keys: o.keys, issuers: o.issuers, audiences, now, verified: signed };
      // A remembered token (the usual case) goes on without waiting for a turn of the event loop, and
      // a token that is not ours (a bootstrap token) is told at once.
      const claims = rememberedClaims(token, v);
      if (claims) return checkedUser(claims, v);
      if (ownIssuer(token, o.issuers) === undefined) return undefined;
      return signedClaims(token, v).then((signedOnes) => signedOnes && checkedUser(signedOnes, v));
    },
  };
}

/** Whether `obj` has been deleting for longer than `graceMs` (bound-token liveness uses 60 s). */
function deletedBefore(obj: KObject, now: Date, graceMs: number): boolean {
  const ts = obj.metadata?.deletionTimestamp;
  return ts !== undefined && Date.parse(ts) < now.getTime() - graceMs;
}
