/**
 * Bootstrap tokens (`<id>.<secret>`), checked against the Secret kube-system/bootstrap-token-<id>
 * of type bootstrap.kubernetes.io/token as upstream's bootstrap authenticator does. Every failure
 * is "not mine" (upstream only logs it), which the token union reports as `invalid bearer token`.
 * The Secret comes from the watch-fed cache when it holds it, or when the cache is complete (then an
 * id it does not hold has no Secret), else from the store, in one read shared by the misses of an
 * event-loop turn (bootstrap-token-secrets.ts); expiration is checked against the clock on every use,
 * wherever the Secret came from.
 */
import { timingSafeEqual } from 'node:crypto';
import type { UserInfo } from '../../api/meta.js';
import { then, type MaybePromise } from '../../lib/maybe-promise.js';
import type { Secret } from '../../api/secrets.js';
import type { ObjectReader } from './types.js';
import { SECRETS } from './resource-infos.js';
import type { AudienceAgnosticTokenAuthenticator } from './token-union.js';
import type { BootstrapTokenSecrets } from './bootstrap-token-secrets.js';

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
export const BOOTSTRAP_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
export const BOOTSTRAP_SECRET_PREFIX = 'bootstrap-token-';

export interface BootstrapTokenOptions {
  objects: ObjectReader;
  /** The Secrets in memory, which read the store for what they do not hold; without it, `objects` is read. */
  secrets?: BootstrapTokenSecrets;
  now: () => Date;
}

/** A Secret data value as text (data is base64 on the wire; stringData if the store kept it). */
function dataValue(secret: Secret, key: string): string | undefined {
  const b64 = secret.data?.[key];
  if (b64 !== undefined) return Buffer.from(b64, 'base64').toString('utf8');
  return secret.stringData?.[key];
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function groupsOf(secret: Secret): string[] | undefined {
  const groups = [BOOTSTRAPPERS_GROUP];
  const extra = dataValue(secret, 'auth-extra-groups');
  for (const g of (extra ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (!EXTRA_GROUP.test(g)) return undefined;
    if (!groups.includes(g)) groups.push(g);
  }
  return groups;
}

function expired(secret: Secret, now: Date): boolean {
  const exp = dataValue(secret, 'expiration');
  if (exp === undefined) return false;
  const t = Date.parse(exp);
  return Number.isNaN(t) || t <= now.getTime();
}

/** The token's Secret, through the cache when there is one (at once when the cache can tell). */
function secretOf(o: BootstrapTokenOptions, id: string): MaybePromise<Secret | undefined> {
  const name = BOOTSTRAP_SECRET_PREFIX + id;
  return o.secrets ? o.secrets.lookup(name) : o.objects.get(SECRETS, 'kube-system', name);
}

export function createBootstrapTokenAuthenticator(o: BootstrapTokenOptions): AudienceAgnosticTokenAuthenticator {
  return {
    authenticateToken(token): MaybePromise<UserInfo | undefined> {
      const m = TOKEN.exec(token);
      if (!m) return undefined;
      const [, id = '', secretPart = ''] = m;
      return then(secretOf(o, id), (secret) => (secret ? userOf(secret, id, secretPart, o.now()) : undefined));
    },
  };
}

/** The token's user when its Secret accepts it: the token's id and secret, unexpired, usable for authentication. */
function userOf(secret: Secret, id: string, secretPart: string, now: Date): UserInfo | undefined {
  if (secret.metadata?.deletionTimestamp || secret.type !== BOOTSTRAP_SECRET_TYPE) return undefined;
  if (dataValue(secret, 'token-id') !== id) return undefined;
  if (!sameSecret(dataValue(secret, 'token-secret') ?? '', secretPart)) return undefined;
  if (expired(secret, now)) return undefined;
  if (dataValue(secret, 'usage-bootstrap-authentication') !== 'true') return undefined;
  const groups = groupsOf(secret);
  return groups ? { username: `system:bootstrap:${id}`, groups } : undefined;
}
