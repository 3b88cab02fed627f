/**
 * Who may read the controller's secure /metrics, decided by the cluster as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` and kube-controller-manager's secure port decide it:
 * the bearer token goes to a TokenReview, the user it names to a SubjectAccessReview for `get` on
 * the non-resource URL (`/metrics`). Both answers are cached briefly (10 s, the delegating
 * authenticator's and authorizer's TTL) so a Prometheus scraping every few seconds costs the API
 * server two reviews per token per TTL, not two per scrape.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { BoundedMap } from '../lib/bounded-map.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../log/logger.js';
import type { MetricsAccess } from '../metrics/http.js';
import type { KubeClient } from './client/kube-client.js';

interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

interface Cached<T> {
  value: T;
  expires: number;
}

const CACHE_TTL_MS = 10_000;
const CACHE_SIZE = 1024;

export interface MetricsAuthOptions {
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  ttlMs?: number;
}

/** A bearer token, parsed as upstream parses it (scheme case-insensitive, the second field). */
function bearer(headers: IncomingHttpHeaders): string | undefined {
  const parts = (headers.authorization ?? '').trim().split(' ');
  return parts.length >= 2 && parts[0]?.toLowerCase() === 'bearer' && parts[1] ? parts[1] : undefined;
}

export class MetricsAuth {
  private readonly users = new BoundedMap<string, Cached<ReviewedUser | undefined>>(CACHE_SIZE);
  private readonly verdicts = new BoundedMap<string, Cached<boolean>>(CACHE_SIZE);
  private readonly ttl: number;

  constructor(private readonly opts: MetricsAuthOptions) {
    this.ttl = opts.ttlMs ?? CACHE_TTL_MS;
  }

  /** Whether the caller of `get path` may have it; API server errors refuse (and are logged), never allow. */
  async check(headers: IncomingHttpHeaders, path: string): Promise<MetricsAccess> {
    const token = bearer(headers);
    if (token === undefined) return { allowed: false, code: 401, message: 'Unauthorized' };
    try {
      const user = await this.authenticate(token);
      if (!user) return { allowed: false, code: 401, message: 'Unauthorized' };
      if (await this.authorize(user, path)) return { allowed: true };
      return { allowed: false, code: 403, message: `Authorization denied for user ${user.username}` };
    } catch (err) {
      this.opts.logger.error({ err }, 'metrics access review failed');
      return { allowed: false, code: 401, message: 'Unauthorized' };
    }
  }

  private cached<T>(map: Map<string, Cached<T>>, key: string): Cached<T> | undefined {
    const hit = map.get(key);
    return hit && hit.expires > this.opts.clock.now() ? hit : undefined;
  }

  private async authenticate(token: string): Promise<ReviewedUser | undefined> {
    // The token itself is never a map key: a heap dump shows hashes only.
    const key = createHash('sha256').update(token).digest('base64');
    const hit = this.cached(this.users, key);
    if (hit) return hit.value;
    const review = await this.opts.client.requestJSON<{ status?: { authenticated?: boolean; user?: ReviewedUser } }>(
      'POST',
      '/apis/authentication.k8s.io/v1/tokenreviews',
      {},
      undefined,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    );
    const user = review.status?.authenticated && review.status.user?.username ? review.status.user : undefined;
    this.users.set(key, { value: user, expires: this.opts.clock.now() + this.ttl });
    return user;
  }

  private async authorize(user: ReviewedUser, path: string): Promise<boolean> {
    const key = JSON.stringify([user.username, user.uid, user.groups, user.extra, path]);
    const hit = this.cached(this.verdicts, key);
    if (hit) return hit.value;
    const review = await this.opts.client.requestJSON<{ status?: { allowed?: boolean } }>(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {},
      undefined,
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb: 'get' } },
      },
    );
    const allowed = review.status?.allowed === true;
    this.verdicts.set(key, { value: allowed, expires: this.opts.clock.now() + this.ttl });
    return allowed;
  }
}
