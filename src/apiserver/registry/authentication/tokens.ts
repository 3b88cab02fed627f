/**
 * TokenRequest (the virtual subresource `serviceaccounts/token`) and TokenReview (a virtual
 * resource), in kube-apiserver's order of checks and with its messages (apiserver.md §5.1, §5.4).
 */
import type { BoundObjectReference, TokenRequest, TokenReview } from '../../../api/authentication.js';
import type { KObject, UserInfo } from '../../../api/meta.js';
import { findResource, type ResourceInfo, type ResourceOf } from '../../../api/resources.js';
import { NODES, PODS, SECRETS, SERVICE_ACCOUNTS } from '../../authentication/resource-infos.js';
import { plainExtra, withAuthenticatedGroup } from '../../authentication/request-authenticator.js';
import type { SigningKey } from '../../authentication/sa-keys.js';
import { issueServiceAccountToken, type ObjectRefClaim } from '../../authentication/sa-token.js';
import type { TokenChain, TokenResponse } from '../../authentication/token-union.js';
import { deepFreeze } from '../../../lib/json.js';
import { rememberJson } from '../../../lib/frozen-json.js';
import { errors } from '../../http/errors.js';
import { invalid } from '../../http/field-errors.js';
import { timestampSeconds } from '../../../lib/rfc3339.js';
import type { RequestContext, Strategy, VirtualCreate } from '../generic/strategy.js';
import type { ObjectReader } from '../../authentication/types.js';

const AUTHN_GROUP = 'authentication.k8s.io';
const AUTHN_V1 = 'authentication.k8s.io/v1';
const MIN_EXPIRATION = 600;
const MAX_EXPIRATION = 2 ** 32;
const DEFAULT_EXPIRATION = 3600;
/** The kubelet's projected-token default; pod-bound requests for it may get a one-year JWT. */
const KUBELET_DEFAULT_EXPIRATION = 3607;
const EXTENDED_EXPIRATION = 365 * 24 * 60 * 60;

export interface TokenRequestOptions {
  key: SigningKey;
  issuer: string;
  apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds; 0 means no maximum. */
  maxExpirationSeconds?: number;
  /** --service-account-extend-token-expiration (default true). */
  extendExpiration?: boolean;
}

interface Bound {
  pod?: ObjectRefClaim;
  secret?: ObjectRefClaim;
  node?: ObjectRefClaim;
}

/** Go's `schema.GroupVersionKind.String()` of a bound reference. */
function gvkString(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  const [group, version] = slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
  return `${group}/${version}, Kind=${kind}`;
}

async function fetchBound<T extends KObject>(objects: ObjectReader, info: ResourceOf<T>, ns: string | undefined, ref: BoundObjectReference): Promise<T> {
  const name = ref.name ?? '';
  const obj = await objects.get(info, info.namespaced ? ns : undefined, name);
  if (!obj) throw errors.notFound({ group: '', resource: info.plural, name });
  const uid = ref.uid;
  if (uid && uid !== obj.metadata?.uid) {
    throw errors.conflict(
      { group: '', resource: ref.kind ?? '', name },
      `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return obj;
}

function refOf(obj: KObject): ObjectRefClaim {
  return { name: obj.metadata?.name, uid: obj.metadata?.uid };
}

async function bindPod(objects: ObjectReader, ns: string, saName: string, ref: BoundObjectReference): Promise<Bound> {
  const pod = await fetchBound(objects, PODS, ns, ref);
  // Every pod but a mirror pod was given an account on create; a mirror pod has none, so no token binds to it.
  if ((pod.spec?.serviceAccountName ?? '') !== saName) {
    throw errors.badRequest(`cannot bind token for serviceaccount "${saName}" to pod running with different serviceaccount name.`);
  }
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) return { pod: refOf(pod) };
  // A missing node still names it in the token, without a uid (ServiceAccountTokenPodNodeInfo).
  const node = await objects.get(NODES, undefined, nodeName);
  return { pod: refOf(pod), node: node ? refOf(node) : { name: nodeName } };
}

async function resolveBound(objects: ObjectReader, ns: string, saName: string, ref: BoundObjectReference | undefined): Promise<Bound> {
  if (ref === undefined || ref === null) return {};
  const apiVersion = ref.apiVersion ?? '';
  const kind = ref.kind ?? '';
  const core = apiVersion === 'v1' || apiVersion === '';
  if (core && kind === 'Pod') return bindPod(objects, ns, saName, ref);
  if (core && kind === 'Secret') return { secret: refOf(await fetchBound(objects, SECRETS, ns, ref)) };
  if (core && kind === 'Node') return { node: refOf(await fetchBound(objects, NODES, undefined, ref)) };
  throw errors.badRequest(`cannot bind token to object of type ${gvkString(apiVersion, kind)}`);
}

function checkNames(body: KObject, ns: string, name: string): void {
  const meta = body.metadata ?? {};
  if (meta.name && meta.name !== name) {
    throw errors.invalid('TokenRequest', AUTHN_GROUP, name, [
      invalid('metadata.name', meta.name, 'must match the service account name if specified'),
    ]);
  }
  if (meta.namespace && meta.namespace !== ns) {
    throw errors.invalid('TokenRequest', AUTHN_GROUP, name, [
      invalid('metadata.namespace', meta.namespace, 'must match the service account namespace if specified'),
    ]);
  }
}

function validExpiration(raw: unknown): number {
  const exp = raw === undefined || raw === null ? DEFAULT_EXPIRATION : raw;
  const fail = (detail: string): never => {
    throw errors.invalid('TokenRequest', AUTHN_GROUP, '', [invalid('spec.expirationSeconds', exp, detail)]);
  };
  if (typeof exp !== 'number' || !Number.isInteger(exp)) return fail('must be an integer number of seconds');
  if (exp < MIN_EXPIRATION) fail('may not specify a duration less than 10 minutes');
  if (exp > MAX_EXPIRATION) fail('may not specify a duration larger than 2^32 seconds');
  return exp;
}

/** --service-account-max-token-expiration (0: none) shortens a longer request, with a warning. */
function capExpiration(seconds: number, max: number, ctx: RequestContext): number {
  if (max <= 0 || seconds <= max) return seconds;
  ctx.warnings.push(`requested expiration of ${seconds} seconds shortened to ${max} seconds`);
  return max;
}

/** Upstream's extended expiration: kubelet-style pod-bound requests for the API audiences only. */
function isExtendable(bound: Bound, seconds: number, audiences: string[], apiAudiences: readonly string[]): boolean {
  return bound.pod !== undefined && seconds === KUBELET_DEFAULT_EXPIRATION && audiences.every((a) => apiAudiences.includes(a));
}

/**
 * The audit log names each token minted without holding it, as upstream does: its JTI, which the
 * requests made with the token carry in user.extra authentication.kubernetes.io/credential-id.
 */
function auditIssued(ctx: RequestContext, jti: string | undefined): void {
  if (jti) ctx.auditAnnotation?.('authentication.kubernetes.io/issued-credential-id', `JTI=${jti}`);
}

export function tokenRequestSubresource(o: TokenRequestOptions): VirtualCreate<TokenRequest> {
  return {
    async create(body, ctx, target) {
      const ns = target.namespace ?? '';
      const name = target.name ?? '';
      checkNames(body, ns, name);
      const sa = await ctx.objects.get(SERVICE_ACCOUNTS, ns, name);
      if (!sa) throw errors.notFound({ group: '', resource: 'serviceaccounts', name });
      const spec = body.spec ?? {};
      const audiences = spec.audiences?.length ? spec.audiences : [...o.apiAudiences];
      const requested = validExpiration(spec.expirationSeconds);
      const bound = await resolveBound(ctx.objects, ns, name, spec.boundObjectRef);
      const expirationSeconds = capExpiration(requested, o.maxExpirationSeconds ?? 0, ctx);
      const extended = (o.extendExpiration ?? true) && isExtendable(bound, expirationSeconds, audiences, o.apiAudiences);
      const now = new Date(Math.floor(ctx.now.getTime() / 1000) * 1000);
      const outSpec = { ...spec, audiences, expirationSeconds };
      const out: TokenRequest = {
        kind: 'TokenRequest',
        apiVersion: AUTHN_V1,
        metadata: { name, namespace: ns, creationTimestamp: timestampSeconds(now) },
        spec: outSpec,
        status: {},
      };
      if (ctx.dryRun) return out;
      const { token, claims } = await issueServiceAccountToken({
        key: o.key,
        issuer: o.issuer,
        audiences,
        namespace: ns,
        serviceAccount: { name, uid: sa.metadata?.uid ?? '' },
        ...bound,
        now,
        expirationSeconds: extended ? EXTENDED_EXPIRATION : expirationSeconds,
        warnAfterSeconds: extended ? expirationSeconds : undefined,
      });
      auditIssued(ctx, claims.jti);
      out.status = { token, expirationTimestamp: timestampSeconds(new Date(now.getTime() + expirationSeconds * 1000)) };
      return out;
    },
  };
}

function resourceInfo(group: string, plural: string): ResourceInfo {
  const r = findResource(group, 'v1', plural);
  if (!r) throw new Error(`resource ${plural} missing from RESOURCES`);
  return r;
}

/** The review's status.user, in fresh arrays (a token's user is shared and frozen; see plainExtra). */
function reviewedUser(u: UserInfo): UserInfo {
  return { username: u.username, uid: u.uid, groups: [...u.groups], extra: u.extra && plainExtra(u.extra) };
}

/** A review's answer to a token that authenticated, and what it was asked (its spec, as it echoes it). */
interface Answer {
  token: string;
  audiences: readonly string[] | undefined;
  shared: readonly string[];
  review: TokenReview;
}

/**
 * The last answer for each shared (frozen) user, which the service-account authenticator builds once
 * per verified token: callers review the same token again and again, and its answer is the same
 * object with the same JSON, which the response writes without encoding it again (frozen-json). Only
 * an authenticated outcome is looked up here, after the token was checked in full (signature memo,
 * issuer, audiences, time, the account and bound objects read live), so a revoked or expired token
 * is refused exactly as before; the answer lives as long as its user, i.e. its verified token.
 */
const answers = new WeakMap<UserInfo, Answer>();

const sameList = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]));

const SPEC_KEYS = ['token', 'audiences'];

/**
 * Whether `spec` is `{token}` or `{token, audiences}` in that order (a list of strings), so the answer
 * can echo it from those two values and the same JSON comes out.
 */
function plainSpec(spec: Record<string, unknown>): boolean {
  let i = 0;
  for (const k in spec) if (k !== SPEC_KEYS[i++]) return false;
  return spec.audiences === undefined || (Array.isArray(spec.audiences) && spec.audiences.every((a) => typeof a === 'string'));
}

function answerOf(response: TokenResponse, token: string, audiences: string[] | undefined): TokenReview {
  const fresh = (): TokenReview => ({
    kind: 'TokenReview',
    apiVersion: AUTHN_V1,
    metadata: { creationTimestamp: null },
    spec: audiences === undefined ? { token } : { token, audiences: [...audiences] },
    status: { authenticated: true, user: reviewedUser(withAuthenticatedGroup(response.user)), audiences: response.audiences },
  });
  const { user } = response;
  if (!Object.isFrozen(user)) return fresh();
  const known = answers.get(user);
  if (known?.token === token && sameList(known.audiences, audiences) && sameList(known.shared, response.audiences)) return known.review;
  const review = deepFreeze(fresh()) as TokenReview;
  rememberJson(review, JSON.stringify(review));
  answers.set(user, { token, audiences: audiences && [...audiences], shared: [...response.audiences], review });
  return review;
}

/** TokenReview: runs the token through the same chain as request authentication. */
export function tokenReviewStrategy(tokens: TokenChain): Strategy<TokenReview> {
  return {
    info: resourceInfo(AUTHN_GROUP, 'tokenreviews'),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    virtual: {
      async create(body, _ctx, target) {
        if (target.namespace) throw errors.badRequest(`namespace is not allowed on this type: ${target.namespace}`);
        const spec = body.spec ?? {};
        const token = spec.token ?? '';
        if (token === '') throw errors.badRequest('token is required for TokenReview in authentication');
        const outcome = await tokens.authenticate(token, spec.audiences ?? []);
        // The usual review: no metadata, a spec of token and audiences, a token that authenticates.
        if (outcome.response && body.metadata === undefined && plainSpec(spec)) return answerOf(outcome.response, token, spec.audiences);
        const status: Record<string, unknown> = { authenticated: outcome.response !== undefined };
        if (outcome.response) {
          status.user = reviewedUser(withAuthenticatedGroup(outcome.response.user));
          status.audiences = outcome.response.audiences;
        }
        if (outcome.error) status.error = outcome.error;
        return {
          kind: 'TokenReview',
          apiVersion: AUTHN_V1,
          metadata: { ...body.metadata, creationTimestamp: null },
          spec: body.spec ?? {},
          status,
        };
      },
      readsBodyOnly: true,
    },
  };
}
