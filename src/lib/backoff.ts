/**
 * The controller's retry delays, as client-go's wait.Backoff with Jitter 1.0: doubling from
 * `initialMs` to `maxMs` (cockatiel), each plus up to 100% jitter, never past the cap. Informers
 * reconnect with it and the start-up discovery retries with it.
 */
import { ExponentialBackoff, noJitterGenerator, type IBackoff } from 'cockatiel';

export interface JitteredBackoffOptions {
  initialMs?: number;
  maxMs?: number;
  random?: () => number;
}

export class JitteredBackoff {
  private readonly steps: ExponentialBackoff<unknown>;
  private step: IBackoff<unknown> | undefined;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(o: JitteredBackoffOptions = {}) {
    this.maxMs = o.maxMs ?? 30_000;
    this.random = o.random ?? Math.random;
    this.steps = new ExponentialBackoff({ initialDelay: o.initialMs ?? 800, maxDelay: this.maxMs, generator: noJitterGenerator });
  }

  /** The wait before the next attempt. */
  next(): number {
    this.step = this.step ? this.step.next(undefined) : this.steps.next();
    const delay = this.step.duration;
    return Math.min(this.maxMs, delay + delay * this.random());
  }

  /** Starts over from `initialMs` (after progress). */
  reset(): void {
    this.step = undefined;
  }
}
