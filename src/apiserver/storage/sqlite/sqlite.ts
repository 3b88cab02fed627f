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
 */
import { stat } from 'node:fs/promises';
import type { KObject } from '../../../api/meta.js';
import { StoreError, type StoreEvent, type StoredObject } from '../store.js';
import { parseFrozen } from '../frozen.js';
import { DEFAULT_HISTORY_LIMIT, IndexedStore } from '../indexed-store.js';
import type { PreparedWrite } from '../mvcc-index.js';
import type { LoadedFile, StoredFile } from './sqlite-worker.js';
import { assertPlain, type ValueTransformer } from '../value-transformer.js';
import { SqliteWriter } from './sqlite-writer.js';

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

  private constructor(
    private readonly writer: SqliteWriter,
    file: DecryptedFile,
    private readonly historyLimit: number,
    private readonly path: string,
    private readonly transformer: ValueTransformer | undefined,
  ) {
    // The storage key is the authenticated data: a value copied under another key does not decrypt.
    super(historyLimit, transformer && ((key, json) => transformer.forKey(key)?.toStorage(Buffer.from(json), key)));
    this.fileCompacted = this.load(file);
    this.sealed = file.sealed;
  }

  /** A value sealed otherwise than it would be now is marked stale, so an unchanged update rewrites it. */
  override async get(key: string): Promise<StoredObject | undefined> {
    const stored = await super.get(key);
    const sealed = stored && this.sealed.get(key);
    if (!sealed || sealed.revision !== stored.revision || !this.transformer?.forKey(key)?.isStale(sealed.value)) return stored;
    return { ...stored, stale: true };
  }

  /** Opens (creating if needed) and locks the store in the file at `path`. */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const historyLimit = options.historyLimit ?? DEFAULT_HISTORY_LIMIT;
    const { writer, file } = await SqliteWriter.start({ path, historyLimit, busyTimeoutMs: options.busyTimeoutMs ?? 2000, quotaBytes: options.quotaBytes });
    try {
      return new SqliteStore(writer, await plainFile(file, options.transformer), historyLimit, path, options.transformer);
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

  /** The file and its write-ahead log, as they take space on disk. */
  async sizeBytes(): Promise<{ endpoint: string; bytes: number }[]> {
    const size = async (file: string): Promise<number> => (await stat(file).catch(() => undefined))?.size ?? 0;
    return [{ endpoint: this.path, bytes: (await size(this.path)) + (await size(`${this.path}-wal`)) }];
  }

  protected override release(): Promise<void> {
    return this.writer.close();
  }

  /** Loads the file into the index; returns the file's compacted revision. */
  private load(file: DecryptedFile): number {
    const current = new Map<string, StoredObject>();
    for (const row of file.kv) current.set(row.key, { key: row.key, object: parseFrozen(row.value), revision: row.revision });
    const events = file.events.map((row) => toEvent(row, current));
    this.index.restore([...current.values()], events, file.revision);
    const oldest = Math.max(file.compacted, file.revision - this.historyLimit, file.unreadableUpTo);
    if (this.index.compactedRevision() !== oldest) throw new Error(`event log lacks revisions after ${oldest}`);
    return file.compacted;
  }
}

/**
 * How the current value of each key encryption at rest claims is stored (its bytes; PLAIN for JSON
 * text), at the revision it was written: enough to tell a stale value (see StoredObject.stale).
 */
type Sealed = Map<string, { revision: number; value: Uint8Array }>;
const PLAIN = Buffer.from('{');

type DecryptedFile = LoadedFile & { unreadableUpTo: number; sealed: Sealed };

/**
 * The file's values as JSON text: encrypted ones (stored as bytes) decrypted. A current value that
 * cannot be read fails the open: starting without it would serve a store that lost it. History
 * (older revisions, kept for watches) that no configured key reads any more — after a key rotation
 * removed the old key — is dropped as if compacted, as etcd's is: `unreadableUpTo` is the newest
 * such revision, and watches from before it get 410 Gone. A KMS plugin that is down fails the open.
 */
async function plainFile(file: StoredFile, transformer: ValueTransformer | undefined): Promise<DecryptedFile> {
  const pending: Promise<void>[] = [];
  let unreadableUpTo = 0;
  const sealed: Sealed = new Map();
  for (const row of file.kv) {
    if (transformer?.forKey(row.key)) sealed.set(row.key, { revision: row.revision, value: typeof row.value === 'string' ? PLAIN : row.value });
  }
  const plain = (key: string, value: string | Uint8Array, set: (text: string) => void, history?: number): void => {
    const transform = transformer?.forKey(key);
    if (!transform) {
      assertPlain(value, key);
      if (typeof value !== 'string') set(Buffer.from(value).toString('utf8'));
      return;
    }
    const decoded = (bytes: Uint8Array): void => set(Buffer.from(bytes).toString('utf8'));
    const failed = (err: unknown): void => {
      if (history !== undefined && !(err instanceof StoreError)) {
        unreadableUpTo = Math.max(unreadableUpTo, history);
        return;
      }
      (err as Error).message = `cannot read ${key} from the store: ${(err as Error).message}`;
      throw err;
    };
    try {
      const out = transform.fromStorage(typeof value === 'string' ? Buffer.from(value) : value, key);
      if (out instanceof Uint8Array) decoded(out);
      else pending.push(out.then(decoded, failed));
    } catch (err) {
      failed(err);
    }
  };
  // The rows are the worker's copies: decrypted in place.
  for (const row of file.kv) plain(row.key, row.value, (text) => (row.value = text));
  for (const row of file.events) {
    plain(row.key, row.value, (text) => (row.value = text), row.revision);
    if (row.prev !== null) plain(row.key, row.prev, (text) => (row.prev = text), row.revision);
  }
  await Promise.all(pending);
  return { ...(file as LoadedFile), events: (file as LoadedFile).events.filter((e) => e.revision > unreadableUpTo), unreadableUpTo, sealed };
}

/** An event row as a StoreEvent; reuses the current value's object when it is this event's. */
function toEvent(row: LoadedFile['events'][number], current: Map<string, StoredObject>): StoreEvent {
  const live = current.get(row.key);
  const object: KObject = live?.revision === row.revision ? live.object : parseFrozen(row.value);
  const event: StoreEvent = { type: row.type, key: row.key, object, revision: row.revision };
  if (row.prev !== null) event.prevObject = parseFrozen(row.prev);
  return Object.freeze(event);
}
