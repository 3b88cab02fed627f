/**
 * The Store behaviour shared by the built-in backends: validation, revisions, range reads and
 * watches are served from an in-memory MVCC index; a backend only decides how a write is made
 * durable (`persist`) before it becomes visible.
 */
import type { KObject } from '../../api/meta.js';
import type { RangeOptions, RangeResult, Store, StoredObject, WatchHandle, WatchOptions } from './store.js';
import { StoreError } from './store.js';
import { MvccIndex, type PreparedWrite, type WriteOp } from './mvcc-index.js';
import { WatchHub } from './watch-hub.js';

/** Events kept for watch resumption and range-at-revision when no limit is given. */
export const DEFAULT_HISTORY_LIMIT = 10_000;

export abstract class IndexedStore implements Store {
  protected readonly index: MvccIndex;
  private readonly hub = new WatchHub();
  private closed = false;

  protected constructor(historyLimit: number) {
    this.index = new MvccIndex(historyLimit);
  }

  /**
   * Makes `write` durable; called before it is applied to the index. Throwing aborts the write
   * and leaves the store unchanged.
   */
  protected abstract persist(write: PreparedWrite): void;

  /** Releases backend resources; called once by `close`. */
  protected abstract release(): void;

  currentRevision(): number {
    return this.index.revision();
  }

  compactedRevision(): number {
    return this.index.compactedRevision();
  }

  async get(key: string): Promise<StoredObject | undefined> {
    this.assertOpen();
    return this.index.get(key);
  }

  async create(key: string, object: KObject): Promise<StoredObject> {
    return this.write({ kind: 'create', key, object });
  }

  async update(key: string, object: KObject, expectedRevision?: number): Promise<StoredObject> {
    return this.write({ kind: 'update', key, object, expectedRevision });
  }

  async delete(key: string, expectedRevision?: number): Promise<StoredObject> {
    return this.write({ kind: 'delete', key, expectedRevision });
  }

  async range(options: RangeOptions): Promise<RangeResult> {
    this.assertOpen();
    return this.index.range(options);
  }

  /** A start revision that cannot be served is reported through `onError`, never thrown. */
  watch(prefix: string, options: WatchOptions): WatchHandle {
    this.assertOpen();
    let backlog;
    try {
      backlog = this.index.eventsAfter(options.fromRevision, prefix);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      backlog = err;
    }
    return this.hub.add(prefix, options, backlog);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hub.stopAll();
    this.release();
  }

  /** Writes run synchronously inside the call, so revisions follow call order. */
  private write(op: WriteOp): StoredObject {
    this.assertOpen();
    const prepared = this.index.prepare(op);
    this.persist(prepared);
    const { event } = prepared;
    this.index.apply(event);
    this.hub.publish(event);
    return { key: event.key, object: event.object, revision: event.revision };
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('store is closed');
  }
}
