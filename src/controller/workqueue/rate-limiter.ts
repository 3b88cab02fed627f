/**
 * client-go's rate limiters. The CSR controllers use the maximum of a per-item exponential backoff
 * (200 ms × 2^failures, capped at 1000 s) and an overall token bucket (10 qps, burst 100).
 */
import type { Clock } from '../../lib/clock.js';

export interface RateLimiter {
  /** How long to wait before the key may be processed again; counts a failure. */
  when(key: string): number;
  /** Clears the key's failure history (after a success). */
  forget(key: string): void;
  numRequeues(key: string): number;
}

/** base × 2^(failures so far), capped at max. */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  when(key: string): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    const delay = this.baseMs * 2 ** exp;
    return Number.isFinite(delay) ? Math.min(delay, this.maxMs) : this.maxMs;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * A token bucket shared by all keys (golang.org/x/time/rate reservation semantics): each call takes a
 * token, and the delay is how long until that token would exist. Zero while tokens remain.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key: string): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The longest delay of its limiters; every limiter sees every call. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.numRequeues(key)));
  }
}

export interface RateLimiterOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  qps: number;
  burst: number;
}

/** The CSR controllers' defaults (k8s-csr.md §4). */
export const CSR_RATE_LIMITER: RateLimiterOptions = { baseDelayMs: 200, maxDelayMs: 1_000_000, qps: 10, burst: 100 };

export function controllerRateLimiter(clock: Clock, opts: RateLimiterOptions = CSR_RATE_LIMITER): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialRateLimiter(opts.baseDelayMs, opts.maxDelayMs),
    new BucketRateLimiter(opts.qps, opts.burst, clock),
  );
}
