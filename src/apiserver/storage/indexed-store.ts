/**
 * The Store behaviour shared by the built-in backends: validation, revisions, range reads and
 * watches are served from an in-memory MVCC index; a backend only decides how a write is made
 * durable (`persist`) before it becomes visible.
 *
 * Group commit (backends whose `persist` is costly, such as an fsync): writes are validated and get
 * their revision in call order, then queue; the writes of one event-loop turn form a group, handed
 * to `persist` at the end of the turn without waiting for the groups before it, so the backend can
 * start the next commit the moment the previous one is on disk and merge the groups that queued
 * meanwhile into one (the SQLite thread does), which is how etcd amortises its WAL fsync over
 * concurrent writers. Groups are settled in order: each write is applied, published and
 * acknowledged only after its group was persisted. A write's CAS sees the writes prepared before
 * it; so if a group fails, it and every write prepared after it fail, none is visible, and their
 * revisions are free again.
 */
import type { KObject } from '../../api/meta.js';
import type { RangeOptions, RangeResult, Store, StoredObject, StoreEvent, StoreWriteOptions, WatchHandle, WatchOptions } from './store.js';
import { isStoreError, StoreError } from './store.js';
import { MvccIndex, type EncodeValue, type PreparedWrite, type WriteOp } from './mvcc-index.js';
import { WatchHub } from './watch-hub.js';

/** Events kept for watch resumption and range-at-revision when no limit is given. */
export const DEFAULT_HISTORY_LIMIT = 10_000;

interface Queued {
  write: PreparedWrite;
  resolve: (stored: StoredObject) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true } | { ok: false; err: unknown };

/** A group handed to `persist`, and the failure count when it was: a later failure dooms it. */
interface Flushed {
  queued: Queued[];
  failures: number;
}

export abstract class IndexedStore implements Store {
  /** `applyAll` queues every watcher's events (delivered in a microtask) before any write it settles resolves. */
  readonly deliversBeforeAck: boolean = true;
  protected readonly index: MvccIndex;
  private readonly hub = new WatchHub();
  private closed = false;
  private group: Queued[] = [];
  /** Settles (never rejects) once every group handed to `persist` so far is settled, in order. */
  private settled: Promise<void> = Promise.resolve();
  /** Groups that failed so far, and the newest failure, which the groups flushed behind it share. */
  private failures = 0;
  private lastFailure: unknown;

  /** `encode` turns each write's value into what the backend stores (encryption at rest). */
  protected constructor(historyLimit: number, encode?: EncodeValue) {
    this.index = new MvccIndex(historyLimit, encode);
  }

  /**
   * Makes `writes` (consecutive revisions, in order) durable as one unit; called before they are
   * applied to the index. Failing aborts all of them and leaves the store unchanged. It is called
   * again before the previous calls settled: the backend persists the calls in call order and
   * fails every call made after one that failed (they continue its revisions). A backend without
   * it (memory) applies each write at once.
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

  readNow(key: string): StoredObject | null | undefined {
    // A closed store answers through `get`, which fails.
    return this.closed ? undefined : (this.index.get(key) ?? null);
  }

  create(key: string, object: KObject, options?: StoreWriteOptions): Promise<StoredObject> {
    return this.write({ kind: 'create', key, object, handOver: options?.handOver });
  }

  update(key: string, object: KObject, expectedRevision?: number, options?: StoreWriteOptions): Promise<StoredObject> {
    return this.write({ kind: 'update', key, object, expectedRevision, handOver: options?.handOver });
  }

  delete(key: string, expectedRevision?: number): Promise<StoredObject> {
    return this.write({ kind: 'delete', key, expectedRevision });
  }

  async range(options: RangeOptions): Promise<RangeResult> {
    this.assertOpen();
    return this.index.range(options);
  }

  async count(prefix: string): Promise<number> {
    this.assertOpen();
    return this.index.count(prefix);
  }

  /** A start revision that cannot be served is reported through `onError`, never thrown. */
  watch(prefix: string, options: WatchOptions): WatchHandle {
    this.assertOpen();
    let backlog;
    try {
      backlog = this.backlog(prefix, options.fromRevision);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      backlog = err;
    }
    return this.hub.add(prefix, options, backlog);
  }

  /** The events a watch from `fromRevision` starts with; a StoreError when they cannot be served. */
  protected backlog(prefix: string, fromRevision: number): StoreEvent[] {
    return this.index.eventsAfter(fromRevision, prefix);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Writes accepted before close still commit (or fail) and are answered.
    this.flush();
    await this.settled;
    this.hub.stopAll();
    await this.release?.();
  }

  /**
   * Writes are validated and numbered synchronously inside the call, so revisions follow call order.
   * A refused write is a rejected promise, as from an async method, without wrapping every write's
   * promise in another one.
   */
  private write(op: WriteOp): Promise<StoredObject> {
    let write: PreparedWrite;
    try {
      this.assertOpen();
      write = this.index.prepare(op);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (!this.persist) {
      this.applyAll([write]);
      return Promise.resolve(write.result);
    }
    return new Promise((resolve, reject) => {
      this.group.push({ write, resolve, reject });
      if (this.group.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Hands the queued group to `persist` now, and settles it after the groups before it. */
  private flush(): void {
    if (this.group.length === 0 || !this.persist) return;
    const flushed: Flushed = { queued: this.group, failures: this.failures };
    this.group = [];
    const persisted = this.persist(flushed.queued.map((q) => q.write)).then(
      (): Outcome => ({ ok: true }),
      (err: unknown): Outcome => ({ ok: false, err }),
    );
    this.settled = this.settled.then(async () => this.settle(flushed, await persisted));
  }

  private settle({ queued, failures }: Flushed, outcome: Outcome): void {
    if (failures !== this.failures) {
      // Flushed behind a group that failed, against its writes: fails with it, whatever the backend said.
      for (const q of queued) q.reject(this.lastFailure);
      return;
    }
    if (!outcome.ok) {
      const { err } = outcome;
      // The writes prepared after this group were checked against it: they fail with it. Those not
      // handed to the backend yet are not written even when its outcome is unknown (a Timeout).
      this.failures++;
      this.lastFailure = err;
      const unsent = this.group;
      this.group = [];
      this.index.discardPending();
      for (const q of queued) q.reject(err);
      const notWritten = isStoreError(err, 'Timeout')
        ? new StoreError('Unavailable', '', `not written: a write before it, which it was checked against, has an unknown outcome (${(err as Error).message})`)
        : err;
      for (const q of unsent) q.reject(notWritten);
      return;
    }
    this.applyAll(queued.map((q) => q.write));
    for (const q of queued) q.resolve(q.write.result);
  }

  private applyAll(writes: PreparedWrite[]): void {
    for (const write of writes) {
      this.index.apply(write);
      this.hub.publish(write.event);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('store is closed');
  }
}
