/**
 * One stored resource served in a second version (kube-apiserver serves events.k8s.io/v1 Events from
 * the core/v1 Events in `/registry/events/`): a Store seen under another key prefix, each object
 * converted on the way out and back to the storage version on the way in. Revisions, compare-and-swap
 * and watch are the underlying store's own, so a write through either version is one write, seen by
 * watchers of both, each in its own version.
 */
import type { KObject } from '../../../api/meta.js';
import { parseFrozen } from '../../storage/frozen.js';
import type { RangeOptions, RangeResult, Store, StoreEvent, StoredObject, WatchHandle, WatchOptions } from '../../storage/store.js';

export interface StoreConversion {
  /** The collection prefix this view answers for (its registry's own, e.g. `/registry/events.k8s.io/events/`). */
  viewPrefix: string;
  /** Where the objects are stored (e.g. `/registry/core/events/`). */
  storagePrefix: string;
  /** From the storage version to the served one; must not change its argument. */
  fromStorage(obj: KObject): KObject;
  /** From the served version to the storage version; must not change its argument. */
  toStorage(obj: KObject): KObject;
  /**
   * On update, from the served version to the storage version given the stored object: for a served
   * version lacking fields the storage version has, which must survive a write through it.
   */
  toStorageOver?(obj: KObject, stored: KObject | undefined): KObject;
}

export class ConvertedStore implements Store {
  /**
   * Stored objects are frozen and shared by every reader and watcher: each is converted once, and
   * the (frozen) result shared the same way; forgotten with the stored object.
   */
  private readonly converted = new WeakMap<KObject, KObject>();

  constructor(
    private readonly inner: Store,
    private readonly conv: StoreConversion,
  ) {}

  currentRevision(): number {
    return this.inner.currentRevision();
  }

  compactedRevision(): number {
    return this.inner.compactedRevision();
  }

  count(prefix: string): Promise<number> {
    return this.inner.count(this.storageKey(prefix));
  }

  private storageKey(key: string): string {
    if (!key.startsWith(this.conv.viewPrefix)) throw new Error(`key outside the converted resource: ${key}`);
    return this.conv.storagePrefix + key.slice(this.conv.viewPrefix.length);
  }

  private viewKey(key: string): string {
    return this.conv.viewPrefix + key.slice(this.conv.storagePrefix.length);
  }

  private out(obj: KObject): KObject {
    let done = this.converted.get(obj);
    if (!done) {
      done = parseFrozen(JSON.stringify(this.conv.fromStorage(obj)));
      this.converted.set(obj, done);
    }
    return done;
  }

  private stored(s: StoredObject): StoredObject {
    return { key: this.viewKey(s.key), object: this.out(s.object), revision: s.revision };
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const found = await this.inner.get(this.storageKey(key));
    return found && this.stored(found);
  }

  cached(key: string): StoredObject | undefined {
    const found = this.inner.cached?.(this.storageKey(key));
    return found && this.stored(found);
  }

  async create(key: string, object: KObject): Promise<StoredObject> {
    return this.stored(await this.inner.create(this.storageKey(key), this.conv.toStorage(object)));
  }

  async update(key: string, object: KObject, expectedRevision?: number): Promise<StoredObject> {
    const storageKey = this.storageKey(key);
    const over = this.conv.toStorageOver;
    const converted = over ? over(object, (await this.inner.get(storageKey))?.object) : this.conv.toStorage(object);
    return this.stored(await this.inner.update(storageKey, converted, expectedRevision));
  }

  async delete(key: string, expectedRevision?: number): Promise<StoredObject> {
    return this.stored(await this.inner.delete(this.storageKey(key), expectedRevision));
  }

  async range(options: RangeOptions): Promise<RangeResult> {
    const res = await this.inner.range({
      ...options,
      prefix: this.storageKey(options.prefix),
      after: options.after === undefined ? undefined : this.storageKey(options.after),
    });
    return { ...res, items: res.items.map((i) => this.stored(i)) };
  }

  watch(prefix: string, options: WatchOptions): WatchHandle {
    const convertEvent = (e: StoreEvent): StoreEvent => ({
      type: e.type,
      key: this.viewKey(e.key),
      object: this.out(e.object),
      ...(e.prevObject ? { prevObject: this.out(e.prevObject) } : {}),
      revision: e.revision,
    });
    // Every event is converted, so its objects are read: the inner store builds them before delivery.
    return this.inner.watch(this.storageKey(prefix), { ...options, relay: false, onEvent: (e) => options.onEvent(convertEvent(e)) });
  }

  async checkHealth(): Promise<void> {
    await this.inner.checkHealth?.();
  }

  /** The underlying store belongs to the server, which closes it. */
  async close(): Promise<void> {}
}
