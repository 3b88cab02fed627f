/**
 * A Store in one SQLite file (better-sqlite3), for a single API server process.
 *
 * Durability: WAL with `synchronous=FULL`, set on every open because the bundled SQLite only
 * defaults to FULL on the connection that created the database. Writes are group-committed (see
 * IndexedStore): the writes of one event-loop turn share one transaction (events, current values,
 * revision counter, compaction) and one fsync, and each is acknowledged and made visible to reads
 * and watches only after that transaction committed, so an acknowledged write survives kill -9 and
 * power loss. One fsync per write capped creates at ~450/s under concurrent load.
 *
 * Reads and watches are served from the in-memory index (loaded at open), which the file backs:
 * `kv` holds current values, `events` the newest write events with their previous values (watch
 * resumption and range-at-revision after a restart), `meta` the revision counter and the
 * compacted revision. Revisions are explicit and the counter is persisted, so they are never
 * reused, even after deleting the newest key or compacting.
 *
 * The file is opened with an exclusive lock: a second process (or store) on the same file fails
 * at open. Several API server replicas need a shared backend (etcd) instead.
 */
import Database from 'better-sqlite3';
import type { KObject } from '../../api/meta.js';
import type { StoreEvent, StoreEventType, StoredObject } from './store.js';
import { parseFrozen } from './frozen.js';
import { DEFAULT_HISTORY_LIMIT, IndexedStore } from './indexed-store.js';
import type { PreparedWrite } from './mvcc-index.js';

export interface SqliteStoreOptions {
  /** Write events kept (in memory and in the file) for watch resumption and range-at-revision. */
  historyLimit?: number;
  /** How long open waits for another holder of the file's lock (default 2000 ms). */
  busyTimeoutMs?: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, revision INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
  revision INTEGER PRIMARY KEY, key TEXT NOT NULL, type TEXT NOT NULL, value TEXT NOT NULL, prev TEXT
);
INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 0), ('compacted', 0);
`;

interface EventRow {
  revision: number;
  key: string;
  type: StoreEventType;
  value: string;
  prev: string | null;
}

export class SqliteStore extends IndexedStore {
  private readonly insertEvent;
  private readonly putValue;
  private readonly deleteValue;
  private readonly setMeta;
  private readonly deleteEvents;
  private readonly commit;
  private readonly historyLimit: number;
  /** Newest revision removed from the file's event log (lags the index by up to a batch). */
  private fileCompacted: number;

  private constructor(
    private readonly db: Database.Database,
    historyLimit: number,
  ) {
    super(historyLimit, true);
    this.historyLimit = historyLimit;
    this.insertEvent = db.prepare('INSERT INTO events (revision, key, type, value, prev) VALUES (?, ?, ?, ?, ?)');
    this.putValue = db.prepare(
      'INSERT INTO kv (key, value, revision) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision',
    );
    this.deleteValue = db.prepare('DELETE FROM kv WHERE key = ?');
    this.setMeta = db.prepare('UPDATE meta SET value = ? WHERE name = ?');
    this.deleteEvents = db.prepare('DELETE FROM events WHERE revision <= ?');
    this.commit = db.transaction((writes: PreparedWrite[], compactTo: number | undefined) => this.writeRows(writes, compactTo));
    this.fileCompacted = this.load();
  }

  /** Opens (creating if needed) the store in the file at `path`. */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteStore {
    const db = new Database(path, { timeout: options.busyTimeoutMs ?? 2000 });
    try {
      // Exclusive locking before WAL keeps the WAL index in process memory and locks out other writers.
      db.pragma('locking_mode = EXCLUSIVE');
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new Error(`cannot use WAL journal mode for ${path} (got ${String(mode)})`);
      db.pragma('synchronous = FULL');
      // On macOS plain fsync does not flush the drive cache; no effect elsewhere.
      db.pragma('fullfsync = ON');
      db.pragma('checkpoint_fullfsync = ON');
      if (db.pragma('synchronous', { simple: true }) !== 2) throw new Error(`cannot set synchronous=FULL for ${path}`);
      db.exec(SCHEMA);
      return new SqliteStore(db, options.historyLimit ?? DEFAULT_HISTORY_LIMIT);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  protected persist(writes: PreparedWrite[]): void {
    const last = writes.at(-1);
    if (!last) return;
    // Trim the file's log in batches of a tenth of the limit rather than one row per write.
    const keepFrom = last.event.revision - this.historyLimit;
    const batch = Math.max(1, Math.floor(this.historyLimit / 10));
    const compactTo = keepFrom - this.fileCompacted >= batch ? keepFrom : undefined;
    this.commit(writes, compactTo);
    if (compactTo !== undefined) this.fileCompacted = compactTo;
  }

  protected release(): void {
    this.db.close();
  }

  private writeRows(writes: PreparedWrite[], compactTo: number | undefined): void {
    for (const { event, json } of writes) {
      const prev = event.prevObject ? JSON.stringify(event.prevObject) : null;
      this.insertEvent.run(event.revision, event.key, event.type, json, prev);
      if (event.type === 'DELETED') this.deleteValue.run(event.key);
      else this.putValue.run(event.key, json, event.revision);
    }
    this.setMeta.run((writes.at(-1) as PreparedWrite).event.revision, 'revision');
    if (compactTo !== undefined) {
      this.deleteEvents.run(compactTo);
      this.setMeta.run(compactTo, 'compacted');
    }
  }

  /** Loads the file into the index; returns the file's compacted revision. */
  private load(): number {
    const meta = new Map(
      (this.db.prepare('SELECT name, value FROM meta').all() as { name: string; value: number }[]).map((r) => [r.name, r.value]),
    );
    const revision = meta.get('revision') ?? 0;
    const compacted = meta.get('compacted') ?? 0;
    const current = new Map<string, StoredObject>();
    for (const row of this.db.prepare('SELECT key, value, revision FROM kv').iterate() as Iterable<StoredRow>) {
      current.set(row.key, { key: row.key, object: parseFrozen(row.value), revision: row.revision });
    }
    const oldest = Math.max(compacted, revision - this.historyLimit);
    const rows = this.db
      .prepare('SELECT revision, key, type, value, prev FROM events WHERE revision > ? ORDER BY revision')
      .iterate(oldest) as Iterable<EventRow>;
    const events: StoreEvent[] = [];
    for (const row of rows) events.push(toEvent(row, current));
    this.index.restore([...current.values()], events, revision);
    if (this.index.compactedRevision() !== oldest) throw new Error(`event log lacks revisions after ${oldest}`);
    return compacted;
  }
}

interface StoredRow {
  key: string;
  value: string;
  revision: number;
}

/** An event row as a StoreEvent; reuses the current value's object when it is this event's. */
function toEvent(row: EventRow, current: Map<string, StoredObject>): StoreEvent {
  const live = current.get(row.key);
  const object: KObject = live?.revision === row.revision ? live.object : parseFrozen(row.value);
  const event: StoreEvent = { type: row.type, key: row.key, object, revision: row.revision };
  if (row.prev !== null) event.prevObject = parseFrozen(row.prev);
  return Object.freeze(event);
}
