/**
 * The worker thread that owns a SqliteStore's connection (started by SqliteWriter, see
 * sqlite-writer.ts for why it is a thread): opens and locks the file, sends back what it holds, then
 * commits the groups of rows it is sent and answers once they are on disk. The groups that queued
 * while a commit ran are merged into the next transaction, so they share one fsync.
 */
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import Database from 'better-sqlite3';

export type RowType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * One write of a commit group: the new value's stored text (for DELETED, the object's last state)
 * and the revision of the key's live row it replaces (null if the key has none). The main thread
 * knows it from its index, so the commit does not look it up.
 */
export interface WriteRow {
  revision: number;
  key: string;
  type: RowType;
  /** JSON text, or the bytes encryption at rest made of it (stored as a BLOB). */
  value: string | Uint8Array;
  prev: number | null;
}

/** What the file held at open, its values as stored: JSON text, or encrypted bytes. */
export interface StoredFile<V = string | Uint8Array> {
  revision: number;
  compacted: number;
  kv: { key: string; value: V; revision: number }[];
  /** Events after `max(compacted, revision - historyLimit)`, ascending. */
  events: { revision: number; key: string; type: RowType; value: V; prev: V | null }[];
}

/** The file's contents with every value as JSON text. */
export type LoadedFile = StoredFile<string>;

export interface WriterOptions {
  path: string;
  historyLimit: number;
  busyTimeoutMs: number;
  /** Largest size the file may grow to, like etcd's --quota-backend-bytes; commits beyond it fail. */
  quotaBytes?: number;
}

/** What the thread is started with: the file's options and its end of the writer's channel. */
export interface WorkerData extends WriterOptions {
  port: MessagePort;
}

/** An error as it crosses the thread boundary: its message and, for SQLite's, its code. */
export interface Failure {
  message: string;
  code?: string;
}

/** A commit group: its rows (consecutive revisions), the revision it ends at, the log trim if any. */
export interface CommitRequest {
  type: 'commit';
  id: number;
  rows: WriteRow[];
  revision: number;
  compactTo?: number;
}

export type Request = { type: 'close' } | CommitRequest;

/**
 * The thread's answers. A commit's is a bare number, the id of the last group it committed: every
 * group sent before it was answered already or committed with it, and a number costs the main
 * thread no object to deserialize per reply.
 */
export type Reply =
  | number
  | { type: 'opened'; file: StoredFile }
  | ({ type: 'failed'; id: number } & Failure)
  | ({ type: 'open-failed' } & Failure);

/** Commits the groups in one transaction after the file's revision `after`; throws if any cannot be. */
type Commit = (groups: CommitRequest[], after: number) => void;

function failure(err: unknown): Failure {
  const e = err as { message?: string; code?: unknown };
  return { message: String(e.message ?? err), ...(typeof e.code === 'string' ? { code: e.code } : {}) };
}

/**
 * One table, as etcd's MVCC keyspace: a row per write (its revision, key, type and value) linked to
 * the key's previous row, so a write stores its value once. The first format stored each value
 * three times (the event, the event's copy of the previous value, and a current-value row) and
 * cost ~35% more SQLite CPU per write. The current state is each key's newest row unless it is a
 * delete; a watch event's previous value is the row `prev` names. `prev_value` only holds previous
 * values the first format kept after compacting the rows they came from (see migrateFirstFormat).
 *
 * No index on the key: rows are only ever found by revision (the main thread names a write's
 * previous row), and the one query by key, the current state at open, reads every row anyway. The
 * index that earlier files have (log_key) is dropped at open: it cost each commit a B-tree insert
 * per row and a page more in the WAL (SQLite CPU per write 48 → 40 µs at 4 writes a commit). A
 * release that still creates it at open builds it again from the rows.
 */
const LOG_SCHEMA = `
  CREATE TABLE IF NOT EXISTS log (
    revision INTEGER PRIMARY KEY, key TEXT NOT NULL, type TEXT NOT NULL, value TEXT NOT NULL, prev INTEGER, prev_value TEXT
  );
  DROP INDEX IF EXISTS log_key;
`;

function isFirstFormat(db: Database.Database): boolean {
  return db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kv'").pluck().get() === 1;
}

/**
 * Rewrites a first-format file (kv + events) into the log table in one transaction, so a crash
 * leaves either format whole. Events become rows linked to the key's previous row; a current value
 * whose event was compacted becomes a row of its own at its revision; an event whose previous row
 * was compacted keeps its previous value in prev_value.
 */
function migrateFirstFormat(db: Database.Database): void {
  db.transaction(() => {
    db.exec(LOG_SCHEMA);
    // The previous-row lookup by key needs an index for the migration only.
    db.exec(`
      INSERT INTO log (revision, key, type, value) SELECT revision, key, 'MODIFIED', value FROM kv
        WHERE revision NOT IN (SELECT revision FROM events);
      INSERT INTO log (revision, key, type, value, prev_value) SELECT revision, key, type, value, prev FROM events;
      CREATE INDEX migration_key ON log (key, revision);
      UPDATE log SET prev = (SELECT max(p.revision) FROM log p WHERE p.key = log.key AND p.revision < log.revision)
        WHERE prev_value IS NOT NULL;
      DROP INDEX migration_key;
      UPDATE log SET prev_value = NULL WHERE prev IS NOT NULL;
      DROP TABLE events;
      DROP TABLE kv;
    `);
  })();
}

/** Opens the file with an exclusive lock, WAL and synchronous=FULL, creating the tables when new. */
export function openDatabase(opts: WriterOptions): Database.Database {
  const db = new Database(opts.path, { timeout: opts.busyTimeoutMs });
  try {
    // Exclusive locking before WAL keeps the WAL index in process memory and locks out other writers.
    db.pragma('locking_mode = EXCLUSIVE');
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`cannot use WAL journal mode for ${opts.path} (got ${String(mode)})`);
    // FULL syncs the WAL at each commit, so an acknowledged write survives power loss, as etcd syncs
    // its WAL before answering; in WAL mode NORMAL syncs only at checkpoints (a write outlives the
    // process, not the machine). SQLite uses fdatasync, as etcd does, only when built with
    // HAVE_FDATASYNC, which better-sqlite3's build leaves out (it calls fsync), and no pragma picks it;
    // a 4 KiB overwrite's fdatasync measured 0.96 of fsync's on this ext4 disk, within noise.
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
      INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 0), ('compacted', 0);
    `);
    if (isFirstFormat(db)) migrateFirstFormat(db);
    else db.exec(LOG_SCHEMA);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function loadFile(db: Database.Database, historyLimit: number): StoredFile {
  const meta = new Map((db.prepare('SELECT name, value FROM meta').all() as { name: string; value: number }[]).map((r) => [r.name, r.value]));
  const revision = meta.get('revision') ?? 0;
  const compacted = meta.get('compacted') ?? 0;
  return {
    revision,
    compacted,
    // SQLite takes the other columns of an aggregate query with max() from the row holding the max.
    kv: db.prepare(
      "SELECT key, value, revision FROM (SELECT key, value, type, max(revision) AS revision FROM log GROUP BY key) WHERE type != 'DELETED'",
    ).all() as StoredFile['kv'],
    events: db
      .prepare(
        'SELECT l.revision, l.key, l.type, l.value, coalesce(p.value, l.prev_value) AS prev FROM log l LEFT JOIN log p ON p.revision = l.prev WHERE l.revision > ? ORDER BY l.revision',
      )
      .all(Math.max(compacted, revision - historyLimit)) as StoredFile['events'],
  };
}

/**
 * One transaction for one or more commit groups: a row per write, the revision counter,
 * compaction. Each group must continue the revisions before it: one that does not was prepared
 * behind a group whose commit failed (its CAS saw that group's writes), so it must fail too.
 * Compacting to C keeps what etcd keeps: every row after C and each key's newest row at C unless a
 * delete, so the previous row of any later event is still there.
 */
export function commitTransaction(db: Database.Database): Commit {
  const insertRow = db.prepare('INSERT INTO log (revision, key, type, value, prev) VALUES (?, ?, ?, ?, ?)');
  const setMeta = db.prepare('UPDATE meta SET value = ? WHERE name = ?');
  const compacted = db.prepare("SELECT value FROM meta WHERE name = 'compacted'").pluck();
  // Rows in the window replace their previous rows; deletes in it leave nothing behind.
  const dropReplaced = db.prepare('DELETE FROM log WHERE revision IN (SELECT prev FROM log WHERE revision > ? AND revision <= ? AND prev IS NOT NULL)');
  const dropDeletes = db.prepare("DELETE FROM log WHERE revision > ? AND revision <= ? AND type = 'DELETED'");
  return db.transaction((groups: CommitRequest[], after: number) => {
    let revision = after;
    let compactTo: number | undefined;
    for (const group of groups) {
      const first = group.rows[0]?.revision;
      if (first !== revision + 1) throw new Error(`commit group at revision ${String(first)} does not follow revision ${revision}: a commit before it failed`);
      // Bytes arrive from the main thread as a Uint8Array, which SQLite binds only as a Buffer (a BLOB).
      for (const row of group.rows) insertRow.run(row.revision, row.key, row.type, typeof row.value === 'string' ? row.value : Buffer.from(row.value.buffer, row.value.byteOffset, row.value.byteLength), row.prev);
      revision = group.revision;
      compactTo = group.compactTo ?? compactTo;
    }
    setMeta.run(revision, 'revision');
    if (compactTo !== undefined) {
      const from = compacted.get() as number;
      dropReplaced.run(from, compactTo);
      dropDeletes.run(from, compactTo);
      setMeta.run(compactTo, 'compacted');
    }
  });
}

/**
 * Commits the groups together; if that fails, one at a time, so the groups before the failing one
 * commit, it fails with its own error and the ones after it fail as they would have alone.
 * Returns the file's revision afterwards.
 */
export function commitGroups(port: MessagePort, commit: Commit, groups: CommitRequest[], revision: number): number {
  try {
    commit(groups, revision);
    port.postMessage(groups.at(-1)!.id satisfies Reply);
    return groups.at(-1)?.revision ?? revision;
  } catch (err) {
    if (groups.length === 1) {
      port.postMessage({ type: 'failed', id: groups[0]!.id, ...failure(err) } satisfies Reply);
      return revision;
    }
    return groups.reduce((rev, group) => commitGroups(port, commit, [group], rev), revision);
  }
}

function serve(port: MessagePort, db: Database.Database, commit: Commit, revision: number): void {
  let committed = revision;
  port.on('message', (first: Request) => {
    // Take every request already queued: the commits sent while the last one ran go in one transaction.
    const groups: CommitRequest[] = [];
    let closing = false;
    for (let msg: Request | undefined = first; msg; msg = (receiveMessageOnPort(port)?.message as Request | undefined)) {
      if (msg.type === 'close') {
        closing = true;
        break;
      }
      groups.push(msg);
    }
    if (groups.length > 0) committed = commitGroups(port, commit, groups, committed);
    if (closing) {
      db.close();
      port.close();
    }
  });
}

function main(port: MessagePort, opts: WriterOptions): void {
  let db: Database.Database;
  let file: StoredFile;
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
  serve(port, db, commit, file.revision);
}

// Started by SqliteWriter (imported elsewhere, e.g. by tests, it does nothing).
const data = workerData as WorkerData | null;
if (data?.port) main(data.port, data);
