/**
 * N workers over one rate-limited queue (sample-controller's processNextWorkItem, controller-runtime's
 * reconcileHandler): take a key, reconcile it with a child logger, then forget / requeue by result and
 * error class, and mark it done. Each worker is a loop that takes a key only when it is free, as
 * client-go's `wait.Until(worker)` goroutines do (a shared job queue here cost a promise chain and an
 * event listener per key).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import type { ControllerMetrics } from '../../metrics/controller.js';
import { classifyError } from '../client/errors.js';
import type { Reconciler, Result } from './reconcile.js';
import type { RateLimitingQueue } from '../workqueue/rate-limiting.js';

export interface RunnerOptions {
  name: string;
  queue: RateLimitingQueue;
  reconciler: Reconciler;
  workers: number;
  logger: Logger;
  clock: Clock;
  metrics?: ControllerMetrics;
}

export class Runner {
  private readonly logger: Logger;
  /** Reconciles running now. */
  private inFlight = 0;

  constructor(private readonly opts: RunnerOptions) {
    if (!Number.isInteger(opts.workers) || opts.workers < 1) throw new TypeError(`workers must be a positive integer, got ${opts.workers}`);
    this.logger = opts.logger.child({ controller: opts.name });
    opts.metrics?.init(opts.name, opts.workers, () => this.inFlight);
  }

  /**
   * Runs workers until `signal` aborts: then stops taking keys, shuts the queue down and waits for
   * in-flight reconciles (up to `drainTimeoutMs`; their signal is aborted so API calls can end early).
   */
  async run(signal: AbortSignal, drainTimeoutMs = 30_000): Promise<void> {
    const { queue } = this.opts;
    const stop = (): void => queue.shutDown();
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) stop();
    const workers = Array.from({ length: this.opts.workers }, () => this.worker(signal));
    const drained = Promise.all(workers).then(() => queue.shutDownWithDrain());
    let timer: { cancel(): void } | undefined;
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => (timer = this.opts.clock.setTimeout(() => resolve(true), drainTimeoutMs))),
    ]);
    timer?.cancel();
    signal.removeEventListener('abort', stop);
    if (timedOut) this.logger.info({ pending: this.inFlight }, 'shutdown deadline passed with reconciles still running');
  }

  /** Takes and reconciles keys one at a time until the queue shuts down or `signal` aborts. */
  private async worker(signal: AbortSignal): Promise<void> {
    const { queue } = this.opts;
    while (!signal.aborted) {
      const key = await queue.get();
      if (key === undefined) return;
      if (signal.aborted) {
        queue.done(key);
        return;
      }
      this.inFlight++;
      try {
        await this.process(key, signal);
      } finally {
        this.inFlight--;
      }
    }
  }

  /** One reconcile. Never rejects: every outcome is handled here. */
  private async process(key: string, signal: AbortSignal): Promise<void> {
    const { queue, metrics, name, clock } = this.opts;
    const reconcileID = randomUUID();
    const logger = this.logger.child({ key, reconcileID });
    const started = clock.now();
    try {
      let result: Result;
      try {
        result = await this.opts.reconciler.reconcile(key, { logger, signal, reconcileID });
      } catch (err) {
        this.handleError(key, err, logger);
        return;
      }
      queue.forget(key);
      if (result !== 'done' && result.requeueAfter > 0) {
        queue.addAfter(key, result.requeueAfter);
        metrics?.reconciled(name, 'requeue_after');
      } else {
        metrics?.reconciled(name, 'success');
      }
    } finally {
      metrics?.timed(name, (clock.now() - started) / 1000);
      queue.done(key);
    }
  }

  private handleError(key: string, err: unknown, logger: Logger): void {
    const { queue, metrics, name } = this.opts;
    const cls = classifyError(err);
    switch (cls) {
      case 'notFound':
        // The object is gone: nothing left to reconcile.
        queue.forget(key);
        metrics?.reconciled(name, 'success');
        logger.debug({ err }, 'object not found, done');
        return;
      case 'conflict':
        // A stale read or "not yet": retry with backoff, but it is not a failure.
        queue.addRateLimited(key);
        metrics?.reconciled(name, 'requeue');
        logger.debug({ err }, 'requeued');
        return;
      case 'terminal':
        // Retrying cannot fix it: count it and drop the key.
        queue.forget(key);
        metrics?.reconciled(name, 'error');
        metrics?.errors.inc({ controller: name });
        metrics?.terminalErrors.inc({ controller: name });
        logger.error({ err }, 'reconcile failed permanently');
        return;
      case 'retry':
        queue.addRateLimited(key);
        metrics?.reconciled(name, 'error');
        metrics?.errors.inc({ controller: name });
        logger.error({ err, requeues: queue.numRequeues(key) }, 'reconcile failed');
        return;
    }
  }
}
