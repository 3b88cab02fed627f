/**
 * Bearer-token authenticators and their union. One union serves both request authentication and
 * TokenReview, so a token means the same thing on both paths, and failures read as kube-apiserver's
 * do: `invalid bearer token`, or `[invalid bearer token, <specific error>]`.
 */
import type { UserInfo } from '../../api/meta.js';

export interface TokenResponse {
  user: UserInfo;
  /** The token's audiences that intersect the requested ones. */
  audiences: string[];
}

/**
 * One kind of token. Returns undefined when the token is not of this kind ("not mine"); throws an
 * Error whose message is the reason when the token is of this kind but invalid.
 */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResponse | undefined>;
}

/** A token kind that knows nothing of audiences (static file, bootstrap tokens). */
export interface AudienceAgnosticTokenAuthenticator {
  authenticateToken(token: string): Promise<UserInfo | undefined>;
}

export interface TokenOutcome {
  response?: TokenResponse;
  /** Set when no authenticator accepted the token; the text TokenReview reports. */
  error?: string;
}

export interface TokenChain {
  /** Runs every authenticator in order; `audiences` empty means the API audiences. */
  authenticate(token: string, audiences?: string[]): Promise<TokenOutcome>;
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
    async authenticateToken(token, audiences) {
      const auds = intersect(apiAudiences, audiences);
      if (auds.length === 0) return undefined;
      const user = await inner.authenticateToken(token);
      return user ? { user, audiences: auds } : undefined;
    },
  };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function createTokenChain(authenticators: TokenAuthenticator[], apiAudiences: readonly string[]): TokenChain {
  return {
    apiAudiences,
    async authenticate(token, audiences) {
      const target = audiences && audiences.length > 0 ? audiences : apiAudiences;
      // The loopback-token authenticator upstream always contributes this message first.
      let errs: string[] | undefined;
      for (const a of authenticators) {
        try {
          const response = await a.authenticateToken(token, target);
          if (response) return { response };
        } catch (err) {
          const text = message(err);
          errs ??= [INVALID_BEARER_TOKEN];
          if (!errs.includes(text)) errs.push(text);
        }
      }
      return { error: errs && errs.length > 1 ? `[${errs.join(', ')}]` : INVALID_BEARER_TOKEN };
    },
  };
}
