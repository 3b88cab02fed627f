/**
 * `up`'s controller on a thread of its own (node:worker_threads), so the API server's event loop carries
 * only the server and the controller's reconciles, informer decoding and client I/O use the other core.
 * A thread rather than a child process: one process, one PID and one RSS for an operator (and for the
 * benchmarks reading /proc), no second copy of the credentials on disk, and the data directory's lock
 * held once. The thread is named `controller` (/proc/PID/task/TID/comm), so its CPU can be told apart.
 *
 * As a Deployment's controller, it is a unit that lives or dies whole: the thread ends only when asked
 * to stop (it then finishes in-flight work and releases its Lease first) or because it failed. `done`
 * says which; `up` stops the API server and exits non-zero on a failure, so whatever supervises `up`
 * restarts it instead of leaving an API server without its controller.
 *
 * `up` starts the thread before the API server and hands it the controller's kubeconfig once the
 * server is up: the thread's isolate loads the controller's modules (seconds on a busy machine)
 * while the main thread starts the server, so the banner is not later for it.
 *
 * A thread can also hang without ending: its event loop stuck (a loop that never yields), while the API
 * server on the main thread goes on answering. So the thread posts a heartbeat every second from its
 * event loop, and the main thread watches: silent for HEARTBEAT_DEADLINE_MS, the thread is terminated
 * and `done` rejects with ControllerStalledError, as for a thread that died; late by half of that,
 * `checkAlive` fails, so up's /readyz and /healthz say so (`[-]controller`) before then. The deadline is
 * far above a GC pause or a long synchronous step (decoding a large list) on a loaded machine.
 *
 * The thread's code is its own module, controller-thread-entry.ts.
 */
import { Worker } from 'node:worker_threads';
import type { ControllerConfig } from '../config/schema.js';
import { workerModule } from '../lib/worker-module.js';

/** What the thread starts from (its workerData). */
export interface ControllerThreadData {
  config: ControllerConfig;
  /** The log file the thread appends its lines to, beside the main thread's. */
  logFile: string;
}

/** An error as it crosses to the main thread: what explainStartError reads survives the copy. */
export interface ThreadError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  address?: string;
  port?: number;
}

/** From the thread: its event loop turns, its probe server listens (again, after a lost election), or its run ended. */
export type ThreadMessage = { type: 'heartbeat' } | { type: 'listening'; url: string } | { type: 'stopped' } | { type: 'failed'; error: ThreadError };

/** How often the thread posts a heartbeat. */
export const HEARTBEAT_INTERVAL_MS = 1000;
/** Silence after which the thread is taken for hung: terminated, and up ends non-zero. */
export const HEARTBEAT_DEADLINE_MS = 10_000;

/** The thread's event loop stopped turning: no heartbeat for `silentMs`. */
export class ControllerStalledError extends Error {
  readonly code = 'ControllerStalled';
  constructor(readonly silentMs: number) {
    super(`controller thread stalled: no heartbeat from its event loop for ${(silentMs / 1000).toFixed(1)} s; terminated it`);
    this.name = 'ControllerStalledError';
  }
}

/**
 * To the thread: run against the server in the kubeconfig (exported: the controller's client
 * certificate and key never touch the disk), or stop, as on SIGTERM.
 */
export type ToThreadMessage = { type: 'run'; kubeConfig: string } | { type: 'stop' };

export function toThreadError(err: unknown): ThreadError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as NodeJS.ErrnoException & { address?: unknown; port?: unknown };
  return {
    name: e.name,
    message: e.message,
    stack: e.stack,
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.address === 'string' ? { address: e.address } : {}),
    ...(typeof e.port === 'number' ? { port: e.port } : {}),
  };
}

function fromThreadError(t: ThreadError): Error {
  const { message, ...rest } = t;
  return Object.assign(new Error(message), rest);
}

export interface ControllerThreadOptions {
  config: ControllerConfig;
  logFile: string;
}

export interface ControllerThread {
  /** The thread's id (worker_threads' threadId; the main thread's is 0). */
  readonly threadId: number;
  /**
   * Settles once the thread has ended: resolves after a stop() the controller finished cleanly;
   * rejects with the reason when the controller failed, the thread threw, or it ended unasked.
   */
  readonly done: Promise<void>;
  /**
   * Runs the controller as the user of `kubeConfig` (a kubeconfig's text); `onListening` is called each time its probe server
   * listens: at start, and again after a lost election.
   */
  run(kubeConfig: string, onListening?: (metricsUrl: string) => void): void;
  /** Asks the controller to stop (in-flight reconciles finish, the Lease is released), or not to start. */
  stop(): void;
  /** Resolves while the thread's heartbeats come on time; rejects with why not (a health check's reason). */
  checkAlive(): Promise<void>;
}

export function startControllerThread(opts: ControllerThreadOptions): ControllerThread {
  const module = workerModule(import.meta.url, 'controller-thread-entry');
  const workerData: ControllerThreadData = { config: opts.config, logFile: opts.logFile };
  const worker = new Worker(module.url, { name: 'controller', workerData, execArgv: module.execArgv });
  const send = (m: ToThreadMessage): void => worker.postMessage(m);
  let onListening: ((metricsUrl: string) => void) | undefined;
  let running = false;
  let stopRequested = false;
  let ended: { error?: Error } | undefined;
  let lastBeat: number | undefined;
  worker.on('message', (m: ThreadMessage) => {
    if (m.type === 'heartbeat') {
      lastBeat = performance.now();
      return;
    }
    if (m.type === 'listening') {
      onListening?.(m.url);
      return;
    }
    ended ??= m.type === 'failed' ? { error: fromThreadError(m.error) } : stopRequested ? {} : { error: new Error('controller stopped unasked') };
    // Its run is over and reported: nothing it still holds (closed sockets, timers) matters now.
    void worker.terminate();
  });
  // An exception nothing in the thread caught: the thread is gone (Node ends a worker on it).
  worker.on('error', (err) => (ended ??= { error: err }));
  // Watched from the first heartbeat on: before it the thread is still loading its modules.
  let lastTick = performance.now();
  const watchdog = setInterval(() => {
    const now = performance.now();
    // This tick late means this thread was the busy one: the heartbeats it has not read yet are
    // queued behind this timer, so the next tick judges.
    const late = now - lastTick > 2 * HEARTBEAT_INTERVAL_MS;
    lastTick = now;
    if (late || lastBeat === undefined || ended || now - lastBeat < HEARTBEAT_DEADLINE_MS) return;
    ended = { error: new ControllerStalledError(now - lastBeat) };
    // Stops even a loop that never yields (V8 terminates its execution).
    void worker.terminate();
  }, HEARTBEAT_INTERVAL_MS);
  watchdog.unref();
  const done = new Promise<void>((resolve, reject) => {
    worker.once('exit', (code) => {
      clearInterval(watchdog);
      const error = ended ? ended.error : new Error(`controller thread exited (code ${code})`);
      if (error) reject(error);
      else resolve();
    });
  });
  // Awaited once the server is up; a thread that ends before that is not an unhandled rejection meanwhile.
  done.catch(() => undefined);
  return {
    threadId: worker.threadId,
    done,
    run(kubeConfig, listening) {
      if (running || stopRequested) return;
      running = true;
      onListening = listening;
      send({ type: 'run', kubeConfig });
    },
    stop() {
      if (stopRequested) return;
      stopRequested = true;
      send({ type: 'stop' });
    },
    async checkAlive() {
      if (ended) throw new Error(ended.error ? `controller thread ended: ${ended.error.message}` : 'controller thread stopped');
      if (lastBeat === undefined) throw new Error('controller thread not started yet');
      const now = performance.now();
      const silentMs = now - lastBeat;
      // As for the watchdog: if this thread was the busy one, the heartbeats are queued, not missing.
      if (now - lastTick > 2 * HEARTBEAT_INTERVAL_MS) return;
      if (silentMs >= HEARTBEAT_DEADLINE_MS / 2) throw new Error(`controller thread silent for ${(silentMs / 1000).toFixed(1)} s (ended at ${HEARTBEAT_DEADLINE_MS / 1000} s)`);
    },
  };
}
