/**
 * The worker thread that owns a SqliteStore's connection (started by SqliteWriter, see
 * sqlite-writer.ts for why it is a thread): opens and locks the file, sends back what it holds, then
 * commits each group of rows it is sent in one transaction and answers once it is on disk.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import Database from 'better-sqlite3';

export type RowType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One write of a commit group: the new value's stored text (for DELETED, the object's last state). */
export interface WriteRow {
  revision: number;
  key: string;
  type: RowType;
  value: string;
}

/** What the file held at open. */
export interface LoadedFile {
  revision: number;
  compacted: number;
  kv: { key: string; value: string; revision: number }[];
  /** Events after `max(compacted, revision - historyLimit)`, ascending. */
  events: { revision: number; key: string; type: RowType; value: string; prev: string | null }[];
}

export interface WriterOptions {
  path: string;
  historyLimit: number;
  busyTimeoutMs: number;
  /** Largest size the file may grow to, like etcd's --quota-backend-bytes; commits beyond it fail. */
  quotaBytes?: number;
}

/** An error as it crosses the thread boundary: its message and, for SQLite's, its code. */
export interface Failure {
  message: string;
  code?: string;
}

export type Request = { type: 'close' } | { type: 'commit'; id: number; rows: WriteRow[]; revision: number; compactTo?: number };

export type Reply =
  | { type: 'opened'; file: LoadedFile }
  | { type: 'committed'; id: number }
  | ({ type: 'failed'; id: number } & Failure)
  | ({ type: 'open-failed' } & Failure);

type Commit = (rows: WriteRow[], revision: number, compactTo: number | undefined) => void;

function failure(err: unknown): Failure {
  const e = err as { message?: string; code?: unknown };
  return { message: String(e.message ?? err), ...(typeof e.code === 'string' ? { code: e.code } : {}) };
}

/** Opens the file with an exclusive lock, WAL and synchronous=FULL, creating the tables when new. */
function openDatabase(opts: WriterOptions): Database.Database {
  const db = new Database(opts.path, { timeout: opts.busyTimeoutMs });
  try {
    // Exclusive locking before WAL keeps the WAL index in process memory and locks out other writers.
    db.pragma('locking_mode = EXCLUSIVE');
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`cannot use WAL journal mode for ${opts.path} (got ${String(mode)})`);
    // Set on every open: the bundled SQLite only defaults to FULL on the connection that created the file.
    db.pragma('synchronous = FULL');
    // On macOS plain fsync does not flush the drive cache; no effect elsewhere.
    db.pragma('fullfsync = ON');
    db.pragma('checkpoint_fullfsync = ON');
    if (db.pragma('synchronous', { simple: true }) !== 2) throw new Error(`cannot set synchronous=FULL for ${opts.path}`);
    if (opts.quotaBytes !== undefined) {
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      db.pragma(`max_page_count = ${Math.max(1, Math.floor(opts.quotaBytes / pageSize))}`);
    }
    // The INSERT takes the write lock, which exclusive mode then holds until close.
    db.exec(`
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, revision INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS events (
        revision INTEGER PRIMARY KEY, key TEXT NOT NULL, type TEXT NOT NULL, value TEXT NOT NULL, prev TEXT
      );
      INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 0), ('compacted', 0);
    `);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function loadFile(db: Database.Database, historyLimit: number): LoadedFile {
  const meta = new Map((db.prepare('SELECT name, value FROM meta').all() as { name: string; value: number }[]).map((r) => [r.name, r.value]));
  const revision = meta.get('revision') ?? 0;
  const compacted = meta.get('compacted') ?? 0;
  return {
    revision,
    compacted,
    kv: db.prepare('SELECT key, value, revision FROM kv').all() as LoadedFile['kv'],
    events: db
      .prepare('SELECT revision, key, type, value, prev FROM events WHERE revision > ? ORDER BY revision')
      .all(Math.max(compacted, revision - historyLimit)) as LoadedFile['events'],
  };
}

/** One transaction per commit group: events with previous values, current values, revision counter, compaction. */
function commitTransaction(db: Database.Database): Commit {
  const currentValue = db.prepare('SELECT value FROM kv WHERE key = ?').pluck();
  const insertEvent = db.prepare('INSERT INTO events (revision, key, type, value, prev) VALUES (?, ?, ?, ?, ?)');
  const putValue = db.prepare(
    'INSERT INTO kv (key, value, revision) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision',
  );
  const deleteValue = db.prepare('DELETE FROM kv WHERE key = ?');
  const setMeta = db.prepare('UPDATE meta SET value = ? WHERE name = ?');
  const deleteEvents = db.prepare('DELETE FROM events WHERE revision <= ?');
  return db.transaction((rows: WriteRow[], revision: number, compactTo: number | undefined) => {
    for (const row of rows) {
      // The key's value before this write is its previous value: kept with the event for range-at-revision.
      const prev = (currentValue.get(row.key) as string | undefined) ?? null;
      insertEvent.run(row.revision, row.key, row.type, row.value, prev);
      if (row.type === 'DELETED') deleteValue.run(row.key);
      else putValue.run(row.key, row.value, row.revision);
    }
    setMeta.run(revision, 'revision');
    if (compactTo !== undefined) {
      deleteEvents.run(compactTo);
      setMeta.run(compactTo, 'compacted');
    }
  });
}

function serve(port: MessagePort, db: Database.Database, commit: Commit): void {
  const reply = (r: Reply): void => port.postMessage(r);
  port.on('message', (msg: Request) => {
    if (msg.type === 'close') {
      db.close();
      port.close();
      return;
    }
    try {
      commit(msg.rows, msg.revision, msg.compactTo);
      reply({ type: 'committed', id: msg.id });
    } catch (err) {
      reply({ type: 'failed', id: msg.id, ...failure(err) });
    }
  });
}

function main(port: MessagePort, opts: WriterOptions): void {
  let db: Database.Database;
  let file: LoadedFile;
  try {
    db = openDatabase(opts);
    try {
      file = loadFile(db, opts.historyLimit);
    } catch (err) {
      db.close();
      throw err;
    }
  } catch (err) {
    port.postMessage({ type: 'open-failed', ...failure(err) } satisfies Reply);
    port.close();
    return;
  }
  const commit = commitTransaction(db);
  port.postMessage({ type: 'opened', file } satisfies Reply);
  serve(port, db, commit);
}

if (parentPort) main(parentPort, workerData as WriterOptions);
