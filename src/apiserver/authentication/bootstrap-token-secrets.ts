/**
 * The bootstrap-token Secrets of kube-system in memory, for the bootstrap token authenticator, which
 * kube-apiserver feeds from an informer's lister rather than a storage read per request: on etcd a
 * join then costs no etcd round trip to authenticate.
 *
 * A store reflector (storage/reflector.ts) of the `kube-system/bootstrap-token-` keys: one range, then
 * a watch from its revision, relisted when the watch ends (at once after Compacted, a second later
 * after any other failure).
 * `get` answers only while the list and watch are current: before the first list and while a relist
 * is pending it answers undefined, and so does it for a name it does not hold. `lookup`, which the
 * authenticator uses, then reads the store, unless the cache is `complete()` (the in-process stores,
 * whose writes reach it before they are acknowledged), where a name it does not hold is not in the
 * store either. So a token is never refused for want of a cache, one created through another replica
 * works at once, and on SQLite or in memory a stream of made-up token ids costs no store read. On etcd
 * the misses of one event-loop turn share one range of the `bootstrap-token-` keys, started after
 * every one of them arrived (lib/turn-batch.ts): made-up ids, each a different key, cost one etcd
 * read per turn however many arrive, not one each.
 *
 * A change reaches the cache with its watch event: before the next request on the in-process stores
 * (they publish the event as the write commits), within a watch round trip on etcd, so there a token
 * whose Secret was deleted or changed keeps its old meaning until the event arrives, as it does with
 * upstream's informer. What depends on the clock (`expiration`) is not cached: the authenticator
 * checks it on every use.
 */
import type { Secret } from '../../api/secrets.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import { TurnBatch } from '../../lib/turn-batch.js';
import { Reflector } from '../storage/reflector.js';
import { storageKey, type Store, type StoreEvent, type StoredObject } from '../storage/store.js';
import { BOOTSTRAP_SECRET_PREFIX } from './bootstrap-token.js';

const PREFIX = storageKey('', 'secrets', 'kube-system', BOOTSTRAP_SECRET_PREFIX);

export class BootstrapTokenSecrets {
  /** Secrets by name. Every stored Secret passed the Secret schema when it was written. */
  private readonly secrets = new Map<string, Secret>();
  private readonly reflector: Reflector;
  private readonly deliversBeforeAck: boolean;
  /** The bootstrap-token Secrets as the store holds them, read once for the misses of one turn. */
  private readonly misses = new TurnBatch(async () => {
    const { items } = await this.store.range({ prefix: PREFIX });
    return new Map(items.map((item) => [nameOf(item.key), item.object as Secret]));
  });

  constructor(private readonly store: Store) {
    this.deliversBeforeAck = store.deliversBeforeAck === true;
    this.reflector = new Reflector(store, PREFIX, { replace: (items) => this.replace(items), apply: (e) => this.apply(e) });
  }

  /** The Secret named `name` when the cache is current and holds it; otherwise undefined (read the store). */
  get(name: string): Secret | undefined {
    return this.reflector.synced ? this.secrets.get(name) : undefined;
  }

  /**
   * The Secret named `name` as of this call or later: from memory, at once, when the cache holds it
   * or is complete, else from a read of the store that starts after this call (shared with the other
   * misses of this turn).
   */
  lookup(name: string): MaybePromise<Secret | undefined> {
    const cached = this.get(name);
    if (cached || this.complete()) return cached;
    return this.misses.join().then((secrets) => secrets.get(name));
  }

  /** Whether the first list is done and the watch is running. */
  ready(): boolean {
    return this.reflector.synced;
  }

  /**
   * Whether the cache holds every bootstrap-token Secret acknowledged before now, so that one it does
   * not hold does not exist: synced, on a store that delivers a write's watch events before
   * acknowledging it (Store.deliversBeforeAck). On etcd a Secret written through another replica
   * reaches the cache a round trip later, so a miss there is read from the store.
   */
  complete(): boolean {
    return this.deliversBeforeAck && this.reflector.synced;
  }

  stop(): void {
    this.reflector.stop();
  }

  private replace(items: StoredObject[]): void {
    this.secrets.clear();
    for (const item of items) this.secrets.set(nameOf(item.key), item.object as Secret);
  }

  private apply(e: StoreEvent): void {
    if (e.type === 'DELETED') this.secrets.delete(nameOf(e.key));
    else this.secrets.set(nameOf(e.key), e.object as Secret);
  }
}

function nameOf(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}
