/**
 * Impersonation (Impersonate-User/-Group/-Uid/-Extra-*), as a wrapper around the real
 * authenticator, following upstream's filter: every requested attribute is authorized on its own
 * with verb `impersonate`, the impersonated user replaces the caller, and the headers are removed
 * so nothing later in the pipeline can read them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { UserInfo } from '../../api/meta.js';
import { errors } from '../http/errors.js';
import { unescapePath } from '../http/request-info.js';
import { isPromise, promised, then, type MaybePromise } from '../../lib/maybe-promise.js';
import { authorizeNow, type AuthorizationAttributes, type Authorizer, type Decision } from '../authorization/authorizer.js';
import { ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER } from '../authentication/request-authenticator.js';
import { splitServiceAccountUsername } from '../authentication/sa-token.js';
import { authenticateNow, type AuthenticationRequest, type Authenticator } from '../authentication/types.js';

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
const AUTHN_V1 = 'authentication.k8s.io/v1';

/** One requested attribute, as upstream's ObjectReference (its `%v` is used in one message). */
interface Request {
  kind: string;
  namespace?: string;
  name: string;
  apiVersion?: string;
  fieldPath?: string;
  attrs: Omit<AuthorizationAttributes, 'user' | 'verb'>;
}

type Headers = NodeJS.Dict<string | string[]>;

function values(headers: Headers, name: string): string[] {
  const v = headers[name];
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/**
 * Upstream's unescapeExtraKey of the lowercased header name (Node gives names lowercased): escapes
 * decoded after lowering, so `%41` stays `A`, and a malformed key is kept as sent, not refused.
 */
function unescapeKey(key: string): string {
  try {
    return unescapePath(key);
  } catch {
    return key;
  }
}

/** Go's `%v` of an ObjectReference: every field, space-separated, inside braces. */
function goReference(r: Request): string {
  return `{${[r.kind, r.namespace ?? '', r.name, '', r.apiVersion ?? '', '', r.fieldPath ?? ''].join(' ')}}`;
}

function userRequest(username: string): Request {
  const sa = splitServiceAccountUsername(username);
  if (sa) {
    return {
      kind: 'ServiceAccount',
      namespace: sa.namespace,
      name: sa.name,
      attrs: { apiGroup: '', resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name },
    };
  }
  return { kind: 'User', name: username, attrs: { apiGroup: '', resource: 'users', name: username } };
}

function parseRequests(headers: Headers): Request[] {
  const reqs: Request[] = [];
  const user = values(headers, USER)[0];
  if (user !== undefined) reqs.push(userRequest(user));
  for (const g of values(headers, GROUP)) {
    reqs.push({ kind: 'Group', name: g, attrs: { apiGroup: '', resource: 'groups', name: g } });
  }
  for (const [name, raw] of Object.entries(headers)) {
    if (!name.startsWith(EXTRA_PREFIX) || raw === undefined) continue;
    const key = unescapeKey(name.slice(EXTRA_PREFIX.length));
    for (const v of Array.isArray(raw) ? raw : [raw]) {
      reqs.push({
        kind: 'UserExtra',
        name: v,
        apiVersion: AUTHN_V1,
        fieldPath: key,
        attrs: { apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: key, name: v },
      });
    }
  }
  const uid = values(headers, UID)[0];
  if (uid !== undefined) {
    reqs.push({ kind: 'UID', name: uid, apiVersion: AUTHN_V1, attrs: { apiGroup: 'authentication.k8s.io', resource: 'uids', name: uid } });
  }
  return reqs;
}

function extrasOf(reqs: Request[]): Record<string, string[]> {
  const extra: Record<string, string[]> = {};
  for (const r of reqs.filter((x) => x.kind === 'UserExtra')) (extra[r.fieldPath ?? ''] ??= []).push(r.name);
  return extra;
}

function impersonated(reqs: Request[]): UserInfo {
  const userReq = reqs.find((r) => r.kind === 'User' || r.kind === 'ServiceAccount');
  let username = userReq?.name ?? '';
  const groups = reqs.filter((r) => r.kind === 'Group').map((r) => r.name);
  if (userReq?.kind === 'ServiceAccount') {
    username = `system:serviceaccount:${userReq.namespace ?? ''}:${userReq.name}`;
    // A service account's groups are a fixed mapping; upstream adds them when none were asked for.
    if (groups.length === 0) groups.push('system:serviceaccounts', `system:serviceaccounts:${userReq.namespace ?? ''}`);
  }
  const extra = extrasOf(reqs);
  const user: UserInfo = { username, groups };
  const uid = reqs.find((r) => r.kind === 'UID');
  if (uid) user.uid = uid.name;
  if (Object.keys(extra).length) user.extra = extra;
  // As upstream: system:anonymous is in system:unauthenticated, everyone else in system:authenticated
  // unless asked otherwise, so `--as=system:anonymous` answers for what anonymous clients may do.
  if (username === ANONYMOUS_USER.username) {
    if (!groups.includes(ALL_UNAUTHENTICATED)) groups.push(ALL_UNAUTHENTICATED);
  } else if (!groups.includes(ALL_AUTHENTICATED) && !groups.includes(ALL_UNAUTHENTICATED)) {
    groups.push(ALL_AUTHENTICATED);
  }
  return user;
}

function stripHeaders(headers: IncomingHttpHeaders): void {
  for (const name of Object.keys(headers)) if (name.startsWith('impersonate-')) delete headers[name];
}

/**
 * Whether any Impersonate-* header came. Nearly no request has one, and this test reads only the
 * header names of `headers` (a fast-properties object), where parsing reads Node's
 * `headersDistinct`, a dictionary built per request whose walk cost ~3 µs of every request.
 */
function asksImpersonation(headers: IncomingHttpHeaders): boolean {
  for (const name in headers) if (name.startsWith('impersonate-')) return true;
  return false;
}

/** The 403 of an attribute the caller may not impersonate. */
function refused(r: Request, caller: UserInfo, decision: Decision): never {
  throw errors.forbidden(
    { group: r.attrs.apiGroup ?? '', resource: r.attrs.resource ?? '', name: r.attrs.name, subresource: r.attrs.subresource, namespace: r.attrs.namespace },
    caller.username,
    'impersonate',
    decision.reason,
  );
}

/** Each requested attribute authorized in turn from the `i`th on, at once while the authorizer answers at once; then the impersonated user. */
function authorizeEach(authorizer: Authorizer, caller: UserInfo, reqs: Request[], i: number): MaybePromise<UserInfo> {
  for (; i < reqs.length; i++) {
    const r = reqs[i] as Request;
    const decision = authorizeNow(authorizer, { user: caller, verb: 'impersonate', ...r.attrs });
    if (isPromise(decision)) {
      const next = i + 1;
      return decision.then((later) => (later.allowed ? authorizeEach(authorizer, caller, reqs, next) : refused(r, caller, later)));
    }
    if (!decision.allowed) refused(r, caller, decision);
  }
  return impersonated(reqs);
}

export function createImpersonatingAuthenticator(inner: Authenticator, authorizer: Authorizer): Authenticator {
  const impersonate = (req: AuthenticationRequest, caller: UserInfo | undefined): MaybePromise<UserInfo | undefined> => {
    if (!asksImpersonation(req.headers)) return caller;
    const reqs = parseRequests(req.headersDistinct ?? req.headers);
    stripHeaders(req.headers);
    if (!caller || reqs.length === 0) return caller;
    req.impersonator = caller;
    if (!reqs.some((r) => r.kind === 'User' || r.kind === 'ServiceAccount')) {
      throw errors.badRequest(`requested [${reqs.map(goReference).join(' ')}] without impersonating a user`);
    }
    return authorizeEach(authorizer, caller, reqs, 0);
  };
  const answerNow = (req: AuthenticationRequest): MaybePromise<UserInfo | undefined> => then(authenticateNow(inner, req), (caller) => impersonate(req, caller));
  return { authenticate: (req) => promised(() => answerNow(req)), authenticateNow: answerNow };
}
