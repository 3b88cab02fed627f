/**
 * N workers over one rate-limited queue (sample-controller's processNextWorkItem, controller-runtime's
 * reconcileHandler): take a key, reconcile it with a child logger, then forget / requeue by result and
 * error class, and mark it done. p-queue bounds concurrency; keys are only taken when a worker is free.
 */
import { randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
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
  private readonly pool: PQueue;
  private readonly logger: Logger;

  constructor(private readonly opts: RunnerOptions) {
    this.pool = new PQueue({ concurrency: opts.workers });
    this.logger = opts.logger.child({ controller: opts.name });
    opts.metrics?.init(opts.name, opts.workers, () => this.pool.pending);
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
    for (;;) {
      await this.freeWorker();
      if (signal.aborted) break;
      const key = await queue.get();
      if (key === undefined) break;
      if (signal.aborted) {
        queue.done(key);
        break;
      }
      void this.pool.add(() => this.process(key, signal));
    }
    const drained = this.pool.onIdle().then(() => queue.shutDownWithDrain());
    let timer: { cancel(): void } | undefined;
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => (timer = this.opts.clock.setTimeout(() => resolve(true), drainTimeoutMs))),
    ]);
    timer?.cancel();
    signal.removeEventListener('abort', stop);
    if (timedOut) this.logger.info({ pending: this.pool.pending }, 'shutdown deadline passed with reconciles still running');
  }

  private async freeWorker(): Promise<void> {
    while (this.pool.pending + this.pool.size >= this.opts.workers) {
      await new Promise<void>((resolve) => this.pool.addEventListener('next', () => resolve(), { once: true }));
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
