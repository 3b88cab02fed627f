/**
 * The request authenticator chain in kube-apiserver's order: client certificate, then bearer token
 * (header, or the WebSocket subprotocol), then the authenticated-group adder. Like upstream's
 * union, a failing method does not stop the next one; only when none succeeds does any failure
 * become 401. Without credentials the caller is system:anonymous only on the anonymous paths, as
 * kube-apiserver 1.32's anonymous authenticator with `conditions` (AnonymousAuthConfigurableEndpoints):
 * elsewhere it is undefined, which the pipeline answers with 401, so no RBAC mistake granting
 * system:unauthenticated can open the API to anyone.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { UserInfo } from '../../api/meta.js';
import { errors } from '../http/errors.js';
import { promised, then, type MaybePromise } from '../../lib/maybe-promise.js';
import type { AuthenticationRequest, Authenticator } from './types.js';
import type { CertificateAuthenticator } from './x509.js';
import type { TokenChain, TokenOutcome } from './token-union.js';

export const ALL_AUTHENTICATED = 'system:authenticated';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';
export const ANONYMOUS_USER: UserInfo = { username: 'system:anonymous', groups: [ALL_UNAUTHENTICATED] };
const WS_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

export interface RequestAuthenticatorOptions {
  x509?: CertificateAuthenticator;
  tokens: TokenChain;
  /** The exact paths a request without credentials reaches as system:anonymous; absent: none (--anonymous-auth=false). */
  anonymousPaths?: ReadonlySet<string>;
}

/** What withAuthenticatedGroup made of a frozen user, shared as that user is (x509's, per chain). */
const authenticatedOf = new WeakMap<UserInfo, UserInfo>();

/**
 * Adds system:authenticated unless the user already has it or system:unauthenticated. A frozen user
 * is shared by every request of its credential: it gets one frozen result, not a copy per request.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(ALL_AUTHENTICATED) || user.groups.includes(ALL_UNAUTHENTICATED)) return user;
  if (!Object.isFrozen(user)) return { ...user, groups: [...user.groups, ALL_AUTHENTICATED] };
  let shared = authenticatedOf.get(user);
  if (!shared) authenticatedOf.set(user, (shared = Object.freeze({ ...user, groups: Object.freeze([...user.groups, ALL_AUTHENTICATED]) as string[] })));
  return shared;
}

/**
 * A user's extra in fresh arrays, for a response or an audit event to serialize: a shared user is
 * deep-frozen, and JSON.stringify leaves its fast path for frozen arrays and objects, which cost
 * more than the copy (a TokenReview's response took 2-3 times as long to encode).
 */
export function plainExtra(extra: Readonly<Record<string, readonly string[]>>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const key of Object.keys(extra)) out[key] = [...(extra[key] ?? [])];
  return out;
}

function header(headers: IncomingHttpHeaders, name: string): string {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/** The bearer token of the request, or undefined; follows upstream's parsing to the letter. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const auth = header(headers, 'authorization').trim();
  if (auth !== '') {
    const parts = auth.split(' ');
    if (parts.length < 2 || parts[0]?.toLowerCase() !== 'bearer') return undefined;
    return parts[1] ? parts[1] : undefined;
  }
  if (header(headers, 'upgrade').toLowerCase() !== 'websocket') return undefined;
  for (const p of header(headers, 'sec-websocket-protocol').split(',')) {
    const proto = p.trim();
    if (!proto.startsWith(WS_PROTOCOL_PREFIX)) continue;
    const token = Buffer.from(proto.slice(WS_PROTOCOL_PREFIX.length), 'base64url').toString('utf8');
    return token || undefined;
  }
  return undefined;
}

/** The token's user, or the 401 of a token no authenticator accepted. */
function tokenUser(outcome: TokenOutcome): UserInfo {
  if (outcome.response) return withAuthenticatedGroup(outcome.response.user);
  throw errors.unauthorized();
}

export function createRequestAuthenticator(o: RequestAuthenticatorOptions): Authenticator {
  /** At once for a certificate, anonymous, or a token the chain knows at once; a promise while a token is checked. */
  const authenticateNow = (req: AuthenticationRequest): MaybePromise<UserInfo | undefined> => {
    let failed = false;
    if (o.x509 && req.clientCertificateChain.length > 0) {
      try {
        const user = o.x509.authenticate(req.clientCertificateChain);
        if (user) return withAuthenticatedGroup(user);
      } catch {
        failed = true;
      }
    }
    const token = bearerToken(req.headers);
    if (token !== undefined) return then(o.tokens.authenticateNow(token), tokenUser);
    if (failed) throw errors.unauthorized();
    if (req.path === undefined || !o.anonymousPaths?.has(req.path)) return undefined;
    return { ...ANONYMOUS_USER, groups: [...ANONYMOUS_USER.groups] };
  };
  return { authenticate: (req) => promised(() => authenticateNow(req)), authenticateNow };
}
