import { jest } from '@jest/globals';
import type { KObject } from '../../api/meta.js';
import { BreakableStore } from '../../../test/helpers/breakable-store.js';
import { TrailingStore } from '../../../test/helpers/trailing-store.js';
import { MemoryStore } from '../storage/memory/memory.js';
import { objectReader } from '../registry/registries.js';
import { storageKey, type Store, type WatchHandle, type WatchOptions } from '../storage/store.js';
import { createBootstrapTokenAuthenticator } from './bootstrap-token.js';
import { BootstrapTokenSecrets } from './bootstrap-token-secrets.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const key = (name: string, namespace = 'kube-system'): string => storageKey('', 'secrets', namespace, name);

function tokenSecret(id: string, secret: string, data: Record<string, string> = {}): KObject {
  const all = { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', ...data };
  return {
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(Object.entries(all).map(([k, v]) => [k, b64(v)])),
  };
}

/** The reads (gets and ranges) `store` serves from now on. */
function counted(store: Store): () => number {
  const gets = jest.spyOn(store, 'get');
  const ranges = jest.spyOn(store, 'range');
  return () => gets.mock.calls.length + ranges.mock.calls.length;
}

/**
 * A trailing store whose watchers hear of its writes only when the test calls `catchUp()`, as an etcd
 * replica hears of a write made through another one a round trip after it was acknowledged.
 */
class LateStore extends TrailingStore {
  private readonly held: (() => void)[] = [];

  override watch(prefix: string, options: WatchOptions): WatchHandle {
    return super.watch(prefix, { ...options, onEvent: (e) => this.held.push(() => options.onEvent(e)) });
  }

  catchUp(): void {
    for (const deliver of this.held.splice(0)) deliver();
  }
}

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i > 2000) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe('bootstrap-token Secrets in memory', () => {
  it('holds the kube-system bootstrap-token Secrets listed and watched, and nothing else', async () => {
    const store = new MemoryStore();
    await store.create(key('bootstrap-token-aaaaaa'), tokenSecret('aaaaaa', '0123456789abcdef'));
    await store.create(key('other'), { metadata: { name: 'other', namespace: 'kube-system' }, type: 'Opaque' });
    await store.create(key('bootstrap-token-bbbbbb', 'default'), tokenSecret('bbbbbb', '0123456789abcdef'));
    const cache = new BootstrapTokenSecrets(store);
    expect(cache.get('bootstrap-token-aaaaaa')).toBeUndefined();
    await until(() => cache.ready());
    expect(cache.get('bootstrap-token-aaaaaa')?.metadata?.name).toBe('bootstrap-token-aaaaaa');
    expect([cache.get('other'), cache.get('bootstrap-token-bbbbbb')]).toEqual([undefined, undefined]);

    // Each write is there at the next request: the in-process store publishes it as it commits.
    await store.create(key('bootstrap-token-cccccc'), tokenSecret('cccccc', '0123456789abcdef'));
    await Promise.resolve();
    expect(cache.get('bootstrap-token-cccccc')).toBeDefined();
    await store.update(key('bootstrap-token-cccccc'), tokenSecret('cccccc', 'fedcba9876543210'));
    await Promise.resolve();
    expect(cache.get('bootstrap-token-cccccc')?.data?.['token-secret']).toBe(b64('fedcba9876543210'));
    await store.delete(key('bootstrap-token-aaaaaa'));
    await Promise.resolve();
    expect(cache.get('bootstrap-token-aaaaaa')).toBeUndefined();
    cache.stop();
    expect(cache.get('bootstrap-token-cccccc')).toBeUndefined();
    await store.close();
  });

  it.each(['Compacted', 'Unavailable'] as const)('answers nothing from a watch that ended (%s) until a relist brings the writes it missed', async (code) => {
    const store = new BreakableStore();
    await store.create(key('bootstrap-token-aaaaaa'), tokenSecret('aaaaaa', '0123456789abcdef'));
    const cache = new BootstrapTokenSecrets(store);
    await until(() => cache.ready());
    store.breakWatches(code);
    // Missed by the cache: only the relist can show them.
    await store.delete(key('bootstrap-token-aaaaaa'));
    await store.create(key('bootstrap-token-bbbbbb'), tokenSecret('bbbbbb', '0123456789abcdef'));
    expect([cache.ready(), cache.get('bootstrap-token-aaaaaa')]).toEqual([false, undefined]);
    await until(() => cache.ready());
    expect([cache.get('bootstrap-token-aaaaaa'), cache.get('bootstrap-token-bbbbbb')?.metadata?.name]).toEqual([undefined, 'bootstrap-token-bbbbbb']);
    cache.stop();
    await store.close();
  });

  describe('the authenticator over it', () => {
    const store = new MemoryStore();
    let cache: BootstrapTokenSecrets;
    let now = new Date('2026-01-01T00:00:00Z');
    let reads: () => number;
    const user = async (token: string): Promise<string | undefined> =>
      (await createBootstrapTokenAuthenticator({ objects: objectReader(store), secrets: cache, now: () => now }).authenticateToken(token))?.username;
    afterAll(() => {
      cache.stop();
      return store.close();
    });

    it('reads the store only for a Secret the cache does not hold, and refuses an expired token at once', async () => {
      const expiration = new Date(now.getTime() + 60_000).toISOString();
      await store.create(key('bootstrap-token-aaaaaa'), tokenSecret('aaaaaa', '0123456789abcdef', { expiration }));
      cache = new BootstrapTokenSecrets(store);
      // The cache's own list has begun: count what the authenticator reads.
      reads = counted(store);
      // Before the first list: the store answers.
      expect(cache.ready()).toBe(false);
      expect(await user('aaaaaa.0123456789abcdef')).toBe('system:bootstrap:aaaaaa');
      expect(reads()).toBe(1);
      await until(() => cache.ready());
      expect(await user('aaaaaa.0123456789abcdef')).toBe('system:bootstrap:aaaaaa');
      expect(await user('aaaaaa.0000000000000000')).toBeUndefined();
      expect(reads()).toBe(1);
      // Expiry is the clock's, not an event's: the cached Secret stops working the moment it passes.
      now = new Date(now.getTime() + 60_000);
      expect(await user('aaaaaa.0123456789abcdef')).toBeUndefined();
      expect(reads()).toBe(1);
      // The in-process store's writes reach the cache before they are acknowledged: an id it does not
      // hold has no Secret, and made-up ids cost no store read.
      expect(cache.complete()).toBe(true);
      for (const id of ['zzzzzz', 'yyyyyy', 'xxxxxx']) expect(await user(`${id}.0123456789abcdef`)).toBeUndefined();
      expect(reads()).toBe(1);
    });
  });

  /** An authenticator whose cache watches a store it may trail, once the cache has listed it. */
  const trailing = async (): Promise<{ store: LateStore; cache: BootstrapTokenSecrets; user: (token: string) => Promise<string | undefined>; reads: () => number }> => {
    const store = new LateStore();
    const cache = new BootstrapTokenSecrets(store);
    await until(() => cache.ready());
    expect(cache.complete()).toBe(false);
    const authenticator = createBootstrapTokenAuthenticator({ objects: objectReader(store), secrets: cache, now: () => new Date() });
    const user = async (token: string): Promise<string | undefined> => (await authenticator.authenticateToken(token))?.username;
    return { store, cache, user, reads: counted(store) };
  };

  it('reads the store for an id a cache that may trail it (etcd replicas) does not hold, so a new token works at once', async () => {
    const { store, cache, user, reads } = await trailing();
    // Acknowledged, and not (yet) in what the cache heard.
    await store.create(key('bootstrap-token-dddddd'), tokenSecret('dddddd', '0123456789abcdef'));
    expect(cache.get('bootstrap-token-dddddd')).toBeUndefined();
    expect(await user('dddddd.0123456789abcdef')).toBe('system:bootstrap:dddddd');
    expect(reads()).toBe(1);
    // Once the write reached the cache, the token costs no read.
    store.catchUp();
    expect(await user('dddddd.0123456789abcdef')).toBe('system:bootstrap:dddddd');
    expect(reads()).toBe(1);
    cache.stop();
    await store.close();
  });

  it('shares one store read among the misses of one turn, and never with a read begun before a request came', async () => {
    const { store, cache, user, reads } = await trailing();
    // Made-up ids from an anonymous client, and among them a token whose Secret was written just before.
    await store.create(key('bootstrap-token-eeeeee'), tokenSecret('eeeeee', '0123456789abcdef'));
    const ids = Array.from({ length: 50 }, (_, i) => (i === 17 ? 'eeeeee' : `m${String(i).padStart(5, '0')}`));
    const users = await Promise.all(ids.map((id) => user(`${id}.0123456789abcdef`)));
    expect(users.filter((u) => u !== undefined)).toEqual(['system:bootstrap:eeeeee']);
    expect(reads()).toBe(1);

    // A miss whose read has begun; a Secret acknowledged after that; a request for it after the write.
    const first = user('zzzzzz.0123456789abcdef');
    while (reads() === 1) await new Promise((r) => setImmediate(r));
    await store.create(key('bootstrap-token-ffffff'), tokenSecret('ffffff', '0123456789abcdef'));
    const second = user('ffffff.0123456789abcdef');
    expect([await first, await second]).toEqual([undefined, 'system:bootstrap:ffffff']);
    expect(reads()).toBe(3);
    cache.stop();
    await store.close();
  });
});
