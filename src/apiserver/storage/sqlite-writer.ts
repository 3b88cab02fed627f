/**
 * The thread that owns a SqliteStore's connection. A commit waits on fsync (synchronous=FULL); on
 * the event loop that wait blocked request handling for ~25% of the API server's time under load,
 * so the connection lives in a worker and the main thread only sends each commit group's rows and
 * waits for the reply. The worker also loads the file at open, so there is only ever one connection
 * and it holds the file's exclusive lock from open to close.
 *
 * The worker's body is one self-contained function started with `eval`: the same code then runs
 * from the compiled output and from the TypeScript sources under a test runner, where a separate
 * worker file would need a TypeScript loader of its own.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

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

type Reply =
  | { type: 'opened'; file: LoadedFile }
  | { type: 'committed'; id: number }
  | { type: 'failed'; id: number; message: string; code?: string }
  | { type: 'open-failed'; message: string; code?: string };

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

function replyError(reply: { message: string; code?: string }): Error {
  return Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {});
}

export class SqliteWriter {
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  private stopped: Error | undefined;
  private readonly exited: Promise<void>;

  private constructor(private readonly worker: Worker) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: Reply) => this.onReply(reply));
    worker.on('error', (err) => this.stop(err));
    worker.on('exit', (code) => this.stop(new Error(`SQLite writer thread exited (code ${code})`)));
  }

  /** Starts the thread, opens (creating if needed) and locks the file, and returns what it holds. */
  static start(opts: WriterOptions): Promise<{ writer: SqliteWriter; file: LoadedFile }> {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(`(${sqliteWorkerMain.toString()})()`, { eval: true, workerData: { ...opts, driver } });
    return new Promise((resolve, reject) => {
      const failed = (err: Error): void => {
        worker.off('exit', exited);
        reject(err);
        void worker.terminate();
      };
      const exited = (code: number): void => failed(new Error(`SQLite writer thread exited (code ${code}) while opening ${opts.path}`));
      worker.once('error', failed);
      worker.once('exit', exited);
      worker.once('message', (reply: Reply) => {
        worker.off('error', failed);
        worker.off('exit', exited);
        if (reply.type !== 'opened') return failed(replyError(reply as { message: string }));
        const writer = new SqliteWriter(worker);
        // Idle, the thread must not keep the process alive; commits in flight do (see commit).
        worker.unref();
        resolve({ writer, file: reply.file });
      });
    });
  }

  /**
   * Writes the rows, the revision counter and (when given) the log trimmed to `compactTo` in one
   * transaction; resolves once it committed (fsync done), rejects and leaves the file unchanged if not.
   */
  commit(rows: WriteRow[], revision: number, compactTo: number | undefined): Promise<void> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    if (this.waiting.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'commit', id, rows, revision, compactTo });
    });
  }

  /** Closes the connection after the commits already sent, and ends the thread. */
  async close(): Promise<void> {
    if (!this.stopped) this.worker.postMessage({ type: 'close' });
    this.worker.ref();
    await this.exited;
  }

  private onReply(reply: Reply): void {
    if (reply.type !== 'committed' && reply.type !== 'failed') return;
    const waiter = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker.unref();
    if (reply.type === 'committed') waiter?.resolve();
    else waiter?.reject(replyError(reply));
  }

  /** The thread is gone: nothing in flight can be known to have committed, and nothing more can. */
  private stop(err: Error): void {
    this.stopped ??= err;
    for (const waiter of this.waiting.values()) waiter.reject(this.stopped);
    this.waiting.clear();
  }
}

/* istanbul ignore next: runs in the worker (from its source text), where coverage counters do not exist */
function sqliteWorkerMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- an eval'd worker has require, not import */
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  const opts = workerData as WriterOptions & { driver: string };
  const Database = require(opts.driver) as typeof import('better-sqlite3');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const port = parentPort!;
  const failure = (err: unknown): { message: string; code?: string } => {
    const e = err as { message?: string; code?: unknown };
    return { message: String(e.message ?? err), ...(typeof e.code === 'string' ? { code: e.code } : {}) };
  };

  let db: import('better-sqlite3').Database | undefined;
  let file: LoadedFile;
  try {
    db = new Database(opts.path, { timeout: opts.busyTimeoutMs });
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
    const meta = new Map((db.prepare('SELECT name, value FROM meta').all() as { name: string; value: number }[]).map((r) => [r.name, r.value]));
    const revision = meta.get('revision') ?? 0;
    const compacted = meta.get('compacted') ?? 0;
    file = {
      revision,
      compacted,
      kv: db.prepare('SELECT key, value, revision FROM kv').all() as LoadedFile['kv'],
      events: db
        .prepare('SELECT revision, key, type, value, prev FROM events WHERE revision > ? ORDER BY revision')
        .all(Math.max(compacted, revision - opts.historyLimit)) as LoadedFile['events'],
    };
  } catch (err) {
    db?.close();
    port.postMessage({ type: 'open-failed', ...failure(err) });
    port.close();
    return;
  }
  const conn = db;

  const currentValue = conn.prepare('SELECT value FROM kv WHERE key = ?').pluck();
  const insertEvent = conn.prepare('INSERT INTO events (revision, key, type, value, prev) VALUES (?, ?, ?, ?, ?)');
  const putValue = conn.prepare(
    'INSERT INTO kv (key, value, revision) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision',
  );
  const deleteValue = conn.prepare('DELETE FROM kv WHERE key = ?');
  const setMeta = conn.prepare('UPDATE meta SET value = ? WHERE name = ?');
  const deleteEvents = conn.prepare('DELETE FROM events WHERE revision <= ?');
  const commit = conn.transaction((rows: WriteRow[], revision: number, compactTo: number | undefined) => {
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

  port.postMessage({ type: 'opened', file });
  port.on('message', (msg: { type: 'close' } | { type: 'commit'; id: number; rows: WriteRow[]; revision: number; compactTo?: number }) => {
    if (msg.type === 'close') {
      conn.close();
      port.close();
      return;
    }
    try {
      commit(msg.rows, msg.revision, msg.compactTo);
      port.postMessage({ type: 'committed', id: msg.id });
    } catch (err) {
      port.postMessage({ type: 'failed', id: msg.id, ...failure(err) });
    }
  });
}
