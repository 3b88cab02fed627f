/**
 * The thread that owns a SqliteStore's connection. A commit waits on fsync (synchronous=FULL); on
 * the event loop that wait blocked request handling for ~25% of the API server's time under load,
 * so the connection lives in a worker and the main thread only sends each commit group's rows and
 * waits for the reply. It sends a group as soon as it is formed, without waiting for the commits
 * before it: the thread starts the next commit the moment one is on disk, and merges what queued. The worker also loads the file at open, so there is only ever one connection
 * and it holds the file's exclusive lock from open to close.
 *
 * The thread's code is its own module, sqlite-worker.ts. Both sides talk over a MessageChannel of
 * their own rather than the Worker's: node:worker relays each of the Worker's messages through one
 * more event and reads process.env (a lock and a copy of the variable) per message, a few µs of
 * the main thread per commit.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { workerModule } from '../../../lib/worker-module.js';
import { StoreError } from '../store.js';
import type { Failure, Reply, Request, StoredFile, WorkerData, WriteRow, WriterOptions } from './sqlite-worker.js';

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

function replyError(reply: Failure): Error {
  return Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {});
}

export class SqliteWriter {
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  private stopped: Error | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    port.on('message', (reply: Reply) => this.onReply(reply));
    // Idle, the channel must not keep the process alive; commits in flight do (see commit).
    port.unref();
    worker.on('error', (err) => this.stop(new Error(`SQLite writer thread failed: ${err.message}`)));
    worker.on('exit', (code) => this.stop(new Error(`SQLite writer thread exited (code ${code})`)));
  }

  /** Starts the thread, opens (creating if needed) and locks the file, and returns what it holds. */
  static start(opts: WriterOptions): Promise<{ writer: SqliteWriter; file: StoredFile }> {
    const module = workerModule(import.meta.url, 'sqlite-worker');
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(module.url, { workerData: { ...opts, port: port2 } satisfies WorkerData, transferList: [port2], execArgv: module.execArgv });
    return new Promise((resolve, reject) => {
      const failed = (err: Error): void => {
        worker.off('exit', exited);
        port1.close();
        reject(err);
        void worker.terminate();
      };
      const exited = (code: number): void => failed(new Error(`SQLite writer thread exited (code ${code}) while opening ${opts.path}`));
      worker.once('error', failed);
      worker.once('exit', exited);
      port1.once('message', (reply: Reply) => {
        worker.off('error', failed);
        worker.off('exit', exited);
        if (typeof reply === 'number' || reply.type !== 'opened') return failed(replyError(reply as Failure));
        const writer = new SqliteWriter(worker, port1);
        // The thread never keeps the process alive by itself: the channel does while commits are in flight.
        worker.unref();
        resolve({ writer, file: reply.file });
      });
    });
  }

  /**
   * Writes the rows, the revision counter and (when given) the log trimmed to `compactTo` in one
   * transaction, after the commits sent before; resolves once it committed (fsync done), rejects and
   * leaves the file unchanged if not, and then so do the commits sent after it. If the thread is
   * gone before it answered, rejects with a Timeout: the commit may be on disk or not.
   */
  commit(rows: WriteRow[], revision: number, compactTo: number | undefined): Promise<void> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    if (this.waiting.size === 0) this.port.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.port.postMessage({ type: 'commit', id, rows, revision, compactTo } satisfies Request);
    });
  }

  /** Why nothing can be committed any more (the thread is gone), if so. */
  failure(): Error | undefined {
    return this.stopped;
  }

  /** Closes the connection after the commits already sent, and ends the thread. */
  async close(): Promise<void> {
    if (!this.stopped) this.port.postMessage({ type: 'close' } satisfies Request);
    this.worker.ref();
    await this.exited;
  }

  private onReply(reply: Reply): void {
    if (typeof reply === 'number') {
      // Ids are sent in order and answered in order: every id up to this one is on disk.
      for (const id of this.waiting.keys()) {
        if (id > reply) break;
        this.settle(id)?.resolve();
      }
    } else if (reply.type === 'failed') this.settle(reply.id)?.reject(replyError(reply));
  }

  private settle(id: number): Waiter | undefined {
    const waiter = this.waiting.get(id);
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.port.unref();
    return waiter;
  }

  /**
   * The thread is gone: nothing more can commit (later commits fail as never sent), and the commits
   * sent to it that it did not answer have an unknown outcome, as a write etcd did not confirm: it
   * may have committed them just before it died. They fail with a Timeout (504), never with a
   * failure (500) that a restart would then show as written.
   */
  private stop(err: Error): void {
    if (this.stopped) return;
    this.stopped = err;
    if (this.waiting.size === 0) return;
    const unknown = new StoreError('Timeout', '', `${err.message}: the write sent to it was not confirmed and may or may not have been committed`);
    for (const waiter of this.waiting.values()) waiter.reject(unknown);
    this.waiting.clear();
    this.port.unref();
  }
}
