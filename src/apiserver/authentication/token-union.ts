/**
 * Bearer-token authenticators and their union. One union serves both request authentication and
 * TokenReview, so a token means the same thing on both paths, and failures read as kube-apiserver's
 * do: `invalid bearer token`, or `[invalid bearer token, <specific error>]`.
 */
import type { UserInfo } from '../../api/meta.js';
import { isPromise, promised, then, type MaybePromise } from '../../lib/maybe-promise.js';

export interface TokenResponse {
  user: UserInfo;
  /** The token's audiences that intersect the requested ones. */
  audiences: string[];
}

/**
 * One kind of token. Returns undefined when the token is not of this kind ("not mine"); throws (or
 * rejects with) an Error whose message is the reason when the token is of this kind but invalid. What
 * it can tell without waiting (not its kind, a remembered answer) it answers at once.
 */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences: readonly string[]): MaybePromise<TokenResponse | undefined>;
}

/** A token kind that knows nothing of audiences (static file, bootstrap tokens). */
export interface AudienceAgnosticTokenAuthenticator {
  authenticateToken(token: string): MaybePromise<UserInfo | undefined>;
}

export interface TokenOutcome {
  response?: TokenResponse;
  /** Set when no authenticator accepted the token; the text TokenReview reports. */
  error?: string;
}

export interface TokenChain {
  /** Runs every authenticator in order; `audiences` empty means the API audiences. */
  authenticate(token: string, audiences?: string[]): Promise<TokenOutcome>;
  /** The same outcome, at once when every authenticator asked answered at once; never throws. */
  authenticateNow(token: string, audiences?: string[]): MaybePromise<TokenOutcome>;
  readonly apiAudiences: readonly string[];
}

export const INVALID_BEARER_TOKEN = 'invalid bearer token';

export function intersect(a: readonly string[], b: readonly string[]): string[] {
  return a.filter((x, i) => b.includes(x) && a.indexOf(x) === i);
}

/**
 * Upstream's audience-agnostic wrapper: such tokens are only good for the API server itself, so
 * they authenticate only when the requested audiences include one of the API audiences.
 */
export function audienceAgnostic(
  inner: AudienceAgnosticTokenAuthenticator,
  apiAudiences: readonly string[],
): TokenAuthenticator {
  return {
    authenticateToken(token, audiences) {
      const auds = intersect(apiAudiences, audiences);
      if (auds.length === 0) return undefined;
      return then(inner.authenticateToken(token), (user) => (user ? { user, audiences: auds } : undefined));
    },
  };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The errors so far with `err`'s message added; the loopback-token authenticator upstream always contributes the first. */
function withError(errs: string[] | undefined, err: unknown): string[] {
  const text = message(err);
  const out = errs ?? [INVALID_BEARER_TOKEN];
  if (!out.includes(text)) out.push(text);
  return out;
}

export function createTokenChain(authenticators: TokenAuthenticator[], apiAudiences: readonly string[]): TokenChain {
  /** Asks the authenticators from `i` on; synchronously as long as each answers at once. */
  const from = (token: string, target: readonly string[], i: number, errs: string[] | undefined): MaybePromise<TokenOutcome> => {
    for (; i < authenticators.length; i++) {
      let response: MaybePromise<TokenResponse | undefined>;
      try {
        response = (authenticators[i] as TokenAuthenticator).authenticateToken(token, target);
      } catch (err) {
        errs = withError(errs, err);
        continue;
      }
      if (isPromise(response)) {
        const next = i + 1;
        const failed = errs;
        return response.then(
          (later) => (later ? { response: later } : from(token, target, next, failed)),
          (err: unknown) => from(token, target, next, withError(failed, err)),
        );
      }
      if (response) return { response };
    }
    return { error: errs && errs.length > 1 ? `[${errs.join(', ')}]` : INVALID_BEARER_TOKEN };
  };
  const authenticateNow = (token: string, audiences?: string[]): MaybePromise<TokenOutcome> =>
    from(token, audiences && audiences.length > 0 ? audiences : apiAudiences, 0, undefined);
  return {
    apiAudiences,
    authenticate: (token, audiences) => promised(() => authenticateNow(token, audiences)),
    authenticateNow,
  };
}
