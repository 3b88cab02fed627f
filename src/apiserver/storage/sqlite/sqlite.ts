/**
 * A Store in one SQLite file (better-sqlite3), for a single API server process.
 *
 * Durability: WAL with `synchronous=FULL`. Writes are group-committed (see IndexedStore): the
 * groups that queue up while the previous commit runs share one transaction (rows, revision
 * counter, compaction) and one fsync, and each write is acknowledged and made visible to reads
 * and watches only after that transaction committed, so an acknowledged write survives kill -9
 * and power loss. The connection lives in a worker thread (sqlite-worker.ts, started by
 * sqlite-writer.ts), so the event loop keeps serving requests while a commit waits on the disk.
 *
 * Reads and watches are served from the in-memory index (loaded at open), which the file backs:
 * `log` holds a row per write (each key's newest row is its current value; the rows after the
 * compacted revision serve watch resumption and range-at-revision after a restart, see
 * sqlite-worker.ts), `meta` the revision counter and the compacted revision. Revisions are explicit and the counter is persisted, so they are never
 * reused, even after deleting the newest key or compacting.
 *
 * The file is opened with an exclusive lock: a second process (or store) on the same file fails
 * at open. Several API server replicas need a shared backend (etcd) instead.
 *
 * Encryption at rest: values are encrypted as a write is prepared and decrypted at open. Values
 * whose KMS plugin is down at open stay unread (file-values.ts) while the store serves everything
 * else: a get, list, watch or write that needs one tries the plugin again and otherwise gets its
 * 503, and a retry every UNREAD_RETRY_MS reads them once the plugin is back.
 */
import { stat } from 'node:fs/promises';
import type { KObject } from '../../../api/meta.js';
import type { RangeOptions, RangeResult, StoreEvent, StoredObject, StoreWriteOptions } from '../store.js';
import { parseFrozen } from '../frozen.js';
import { DEFAULT_HISTORY_LIMIT, IndexedStore } from '../indexed-store.js';
import type { PreparedWrite } from '../mvcc-index.js';
import type { ValueTransformer } from '../value-transformer.js';
import { readFile, UNREAD, type ReadFile, type Sealed, type UnreadValues } from './file-values.js';
import { SqliteWriter } from './sqlite-writer.js';

/** How often values left unread at open (a KMS plugin down) are tried again while nobody asks for them. */
const UNREAD_RETRY_MS = 2000;

export interface SqliteStoreOptions {
  /** Write events kept (in memory and in the file) for watch resumption and range-at-revision. */
  historyLimit?: number;
  /** How long open waits for another holder of the file's lock (default 2000 ms). */
  busyTimeoutMs?: number;
  /** Largest size the file may grow to, like etcd's --quota-backend-bytes; writes beyond it fail. */
  quotaBytes?: number;
  /** Encryption at rest: the values of the keys it claims are stored as it transforms them. */
  transformer?: ValueTransformer;
}

export class SqliteStore extends IndexedStore {
  /** Newest revision removed from the file's event log (lags the index by up to a batch). */
  private fileCompacted: number;
  private readonly sealed: Sealed;
  /** Values left unread at open until their KMS plugin is back; undefined (the usual case) when none. */
  private unread: UnreadValues | undefined;
  private retryTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly writer: SqliteWriter,
    file: ReadFile,
    private readonly historyLimit: number,
    private readonly path: string,
    private readonly transformer: ValueTransformer | undefined,
  ) {
    // The storage key is the authenticated data: a value copied under another key does not decrypt.
    super(historyLimit, transformer && ((key, json) => transformer.forKey(key)?.toStorage(Buffer.from(json), key)));
    this.fileCompacted = this.load(file);
    this.sealed = file.sealed;
    this.unread = file.unread;
    if (this.unread) this.retryTimer = setInterval(() => void this.retryUnread(), UNREAD_RETRY_MS).unref();
  }

  /** A value sealed otherwise than it would be now is marked stale, so an unchanged update rewrites it. */
  override async get(key: string): Promise<StoredObject | undefined> {
    let stored = await super.get(key);
    if (this.unread && stored?.object === UNREAD) stored = await this.afterRetry(key, () => this.index.get(key), (s) => s?.object === UNREAD);
    const sealed = stored && this.sealed.get(key);
    if (!stored || !sealed || sealed.revision !== stored.revision || !this.transformer?.forKey(key)?.isStale(sealed.value)) return stored;
    return { ...stored, stale: true };
  }

  /** Only `get` answers for encrypted values (it marks stale ones) and while some values are unread. */
  override readNow(key: string): StoredObject | null | undefined {
    return this.unread || this.sealed.has(key) ? undefined : super.readNow(key);
  }

  override async range(options: RangeOptions): Promise<RangeResult> {
    const res = await super.range(options);
    if (!this.unread || !res.items.some((i) => i.object === UNREAD)) return res;
    return this.afterRetry(options.prefix, () => this.index.range(options), (r) => r.items.some((i) => i.object === UNREAD));
  }

  override update(key: string, object: KObject, expectedRevision?: number, options?: StoreWriteOptions): Promise<StoredObject> {
    if (this.unread && this.index.get(key)?.object === UNREAD) return this.writeUnread(key, () => super.update(key, object, expectedRevision, options));
    return super.update(key, object, expectedRevision, options);
  }

  override delete(key: string, expectedRevision?: number): Promise<StoredObject> {
    if (this.unread && this.index.get(key)?.object === UNREAD) return this.writeUnread(key, () => super.delete(key, expectedRevision));
    return super.delete(key, expectedRevision);
  }

  /** A watch whose history holds unread values fails with their plugin's 503 (a retry starts). */
  protected override backlog(prefix: string, fromRevision: number): StoreEvent[] {
    const events = super.backlog(prefix, fromRevision);
    if (this.unread && events.some((e) => e.object === UNREAD || e.prevObject === UNREAD)) {
      const err = this.unread.errorFor(prefix);
      void this.retryUnread();
      throw err;
    }
    return events;
  }

  /** Opens (creating if needed) and locks the store in the file at `path`. */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const historyLimit = options.historyLimit ?? DEFAULT_HISTORY_LIMIT;
    const { writer, file } = await SqliteWriter.start({ path, historyLimit, busyTimeoutMs: options.busyTimeoutMs ?? 2000, quotaBytes: options.quotaBytes });
    try {
      return new SqliteStore(writer, await readFile(file, options.transformer), historyLimit, path, options.transformer);
    } catch (err) {
      await writer.close();
      throw err;
    }
  }

  protected override async persist(writes: PreparedWrite[]): Promise<void> {
    const last = writes.at(-1);
    if (!last) return;
    // Trim the file's log in batches of a tenth of the limit rather than one row per write.
    const keepFrom = last.event.revision - this.historyLimit;
    const batch = Math.max(1, Math.floor(this.historyLimit / 10));
    const compactTo = keepFrom - this.fileCompacted >= batch ? keepFrom : undefined;
    // Counted once sent, so the groups sent behind it do not trim again; if its commit fails, the
    // next trim starts from what the file holds (the thread reads it there).
    if (compactTo !== undefined) this.fileCompacted = compactTo;
    for (const { event, stored } of writes) {
      if (event.type === 'DELETED') this.sealed.delete(event.key);
      else if (stored) this.sealed.set(event.key, { revision: event.revision, value: stored });
    }
    const rows = writes.map(({ event, json, stored, prevRevision }) => ({ revision: event.revision, key: event.key, type: event.type, value: stored ?? json, prev: prevRevision }));
    return this.writer.commit(rows, last.event.revision, compactTo);
  }

  /** Fails once the writer thread is gone: reads are still served, but no write can commit again. */
  async checkHealth(): Promise<void> {
    const failure = this.writer.failure();
    if (failure) throw failure;
  }

  /** The file and its write-ahead log, as they take space on disk. */
  async sizeBytes(): Promise<{ endpoint: string; bytes: number }[]> {
    const size = async (file: string): Promise<number> => (await stat(file).catch(() => undefined))?.size ?? 0;
    return [{ endpoint: this.path, bytes: (await size(this.path)) + (await size(`${this.path}-wal`)) }];
  }

  protected override release(): Promise<void> {
    clearInterval(this.retryTimer);
    return this.writer.close();
  }

  /**
   * `read()` again after the unread values were tried again (a request met one); fails with why
   * they cannot be read (their plugin's 503) if what it reads still holds one.
   */
  private async afterRetry<T>(key: string, read: () => T, holdsUnread: (result: T) => boolean): Promise<T> {
    const unread = this.unread;
    await this.retryUnread();
    const result = read();
    if (unread && holdsUnread(result)) throw unread.errorFor(key);
    return result;
  }

  /** Writes `key`, whose value is unread, once a retry read it. */
  private async writeUnread(key: string, write: () => Promise<StoredObject>): Promise<StoredObject> {
    await this.afterRetry(key, () => this.index.get(key), (s) => s?.object === UNREAD);
    return write();
  }

  private async retryUnread(): Promise<void> {
    const unread = this.unread;
    if (!unread) return;
    await unread.retry(this.index);
    if (unread.empty() && this.unread === unread) {
      this.unread = undefined;
      clearInterval(this.retryTimer);
    }
  }

  /** Loads the file into the index; returns the file's compacted revision. */
  private load(file: ReadFile): number {
    const current = new Map<string, StoredObject>();
    for (const row of file.kv) current.set(row.key, { key: row.key, object: objectOf(row.value), revision: row.revision });
    const events = file.events.map((row) => toEvent(row, current));
    this.index.restore([...current.values()], events, file.revision);
    const oldest = Math.max(file.compacted, file.revision - this.historyLimit, file.unreadableUpTo);
    if (this.index.compactedRevision() !== oldest) throw new Error(`event log lacks revisions after ${oldest}`);
    return file.compacted;
  }
}

/** An event row as a StoreEvent; reuses the current value's object when it is this event's. */
function toEvent(row: ReadFile['events'][number], current: Map<string, StoredObject>): StoreEvent {
  const live = current.get(row.key);
  const object = live?.revision === row.revision && live.object !== UNREAD ? live.object : objectOf(row.value);
  const event: StoreEvent = { type: row.type, key: row.key, object, revision: row.revision };
  if (row.prev !== null) event.prevObject = objectOf(row.prev);
  return Object.freeze(event);
}

/** A value's object, or the UNREAD marker for a value not read yet. */
function objectOf(json: string | undefined): KObject {
  return json === undefined ? UNREAD : parseFrozen(json);
}
