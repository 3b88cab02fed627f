/**
 * The Store behaviour shared by the built-in backends: validation, revisions, range reads and
 * watches are served from an in-memory MVCC index; a backend only decides how a write is made
 * durable (`persist`) before it becomes visible.
 *
 * Group commit (backends whose `persist` is costly, such as an fsync): writes are validated and get
 * their revision in call order, then queue. One group is persisted at a time: the first write after
 * an idle spell waits for the end of the current event-loop turn, and the writes that queue while a
 * group is being persisted form the next one, which is how etcd amortises its WAL fsync over
 * concurrent writers. Each write is applied, published and acknowledged only after its group was
 * persisted. A write's CAS sees the writes queued and in flight before it; so if a group fails, it
 * and every write queued behind it fail, none is visible, and their revisions are free again.
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
  /** The group being persisted, if any; settles (never rejects) once its writes are settled. */
  private inflight: Promise<void> | undefined;

  protected constructor(historyLimit: number) {
    this.index = new MvccIndex(historyLimit);
  }

  /**
   * Makes `writes` (consecutive revisions, in order) durable as one unit; called before they are
   * applied to the index. Failing aborts all of them and leaves the store unchanged. A backend
   * without it (memory) applies each write at once.
   */
  protected persist?(writes: PreparedWrite[]): Promise<void>;

  /** Releases backend resources; called once by `close`, after every queued write settled. */
  protected release?(): Promise<void>;

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
    // Writes accepted before close still commit (or fail) and are answered.
    for (this.flush(); this.inflight; this.flush()) await this.inflight;
    this.hub.stopAll();
    await this.release?.();
  }

  /** Writes are validated and numbered synchronously inside the call, so revisions follow call order. */
  private write(op: WriteOp): Promise<StoredObject> {
    this.assertOpen();
    const write = this.index.prepare(op);
    if (!this.persist) {
      this.applyAll([write]);
      return Promise.resolve(stored(write));
    }
    return new Promise((resolve, reject) => {
      this.group.push({ write, resolve, reject });
      if (this.group.length === 1 && !this.inflight) setImmediate(() => this.flush());
    });
  }

  /** Starts persisting the queued group unless one is in flight (its end starts the next). */
  private flush(): void {
    if (this.inflight || this.group.length === 0) return;
    const group = this.group;
    this.group = [];
    this.inflight = this.commit(group).finally(() => {
      this.inflight = undefined;
      this.flush();
    });
  }

  private async commit(group: Queued[]): Promise<void> {
    try {
      await this.persist?.(group.map((q) => q.write));
    } catch (err) {
      // The queued writes were checked against this group's: they fail with it.
      const failed = [...group, ...this.group];
      this.group = [];
      this.index.discardPending();
      for (const q of failed) q.reject(err);
      return;
    }
    this.applyAll(group.map((q) => q.write));
    for (const q of group) q.resolve(stored(q.write));
  }

  private applyAll(writes: PreparedWrite[]): void {
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
