/** The rate-limited queue controllers use: failures back off per key through the rate limiter. */
import { DelayingQueue } from './delaying.js';
import type { QueueOptions } from './queue.js';
import { controllerRateLimiter, type RateLimiter } from './rate-limiter.js';

export interface RateLimitingQueueOptions extends QueueOptions {
  rateLimiter?: RateLimiter;
}

export class RateLimitingQueue extends DelayingQueue {
  private readonly limiter: RateLimiter;
  private readonly onRetry: () => void;

  constructor(opts: RateLimitingQueueOptions) {
    super(opts);
    this.limiter = opts.rateLimiter ?? controllerRateLimiter(opts.clock);
    this.onRetry = () => opts.metrics?.retries.inc({ name: opts.name });
  }

  /** Re-adds the key once the rate limiter allows it. */
  addRateLimited(key: string): void {
    if (this.isShuttingDown()) return;
    this.onRetry();
    this.addAfter(key, this.limiter.when(key));
  }

  /** Ends the key's backoff history: call after a successful reconcile. */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }
}
