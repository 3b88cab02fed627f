/**
 * The Store behaviour shared by the built-in backends: validation, revisions, range reads and
 * watches are served from an in-memory MVCC index; a backend only decides how a write is made
 * durable (`persist`) before it becomes visible.
 *
 * Group commit (backends whose `persist` is costly, such as an fsync): writes are validated and get
 * their revision in call order, then wait for the end of the current event-loop turn, and every
 * write of that turn is persisted in one call. Each is applied, published and acknowledged only
 * after that call returned; if it throws, every write of the group fails and none is visible. The
 * requests that arrive while one group's fsync blocks the loop form the next group, which is how
 * etcd amortises its WAL fsync over concurrent writers.
 */
import type { KObject } from '../../api/meta.js';
import type { RangeOptions, RangeResult, Store, StoredObject, WatchHandle, WatchOptions } from './store.js';
import { StoreError } from './store.js';
import { MvccIndex, type PreparedWrite, type WriteOp } from './mvcc-index.js';
import { WatchHub } from './watch-hub.js';

/** Events kept for watch resumption and range-at-revision when no limit is given. */
export const DEFAULT_HISTORY_LIMIT = 10_000;

interface Queued {
  write: PreparedWrite;
  resolve: (stored: StoredObject) => void;
  reject: (err: unknown) => void;
}

export abstract class IndexedStore implements Store {
  protected readonly index: MvccIndex;
  private readonly hub = new WatchHub();
  private closed = false;
  private group: Queued[] = [];

  /** `groupCommit`: batch the writes of one event-loop turn into one `persist` call. */
  protected constructor(
    historyLimit: number,
    private readonly groupCommit = false,
  ) {
    this.index = new MvccIndex(historyLimit);
  }

  /**
   * Makes `writes` (consecutive revisions, in order) durable as one unit; called before they are
   * applied to the index. Throwing aborts all of them and leaves the store unchanged.
   */
  protected abstract persist(writes: PreparedWrite[]): void;

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
    this.flush();
    this.closed = true;
    this.hub.stopAll();
    this.release();
  }

  /** Writes are validated and numbered synchronously inside the call, so revisions follow call order. */
  private write(op: WriteOp): Promise<StoredObject> {
    this.assertOpen();
    const write = this.index.prepare(op);
    if (!this.groupCommit) {
      this.persistAndApply([write]);
      return Promise.resolve(stored(write));
    }
    return new Promise((resolve, reject) => {
      this.group.push({ write, resolve, reject });
      if (this.group.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Persists and applies the queued group (no-op when empty). */
  private flush(): void {
    const group = this.group;
    if (group.length === 0) return;
    this.group = [];
    try {
      this.persistAndApply(group.map((q) => q.write));
    } catch (err) {
      for (const q of group) q.reject(err);
      return;
    }
    for (const q of group) q.resolve(stored(q.write));
  }

  private persistAndApply(writes: PreparedWrite[]): void {
    try {
      this.persist(writes);
    } catch (err) {
      this.index.discardPending();
      throw err;
    }
    for (const { event } of writes) {
      this.index.apply(event);
      this.hub.publish(event);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('store is closed');
  }
}

function stored({ event }: PreparedWrite): StoredObject {
  return { key: event.key, object: event.object, revision: event.revision };
}
