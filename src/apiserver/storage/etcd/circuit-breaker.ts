/**
 * A member's circuit breaker, as cockatiel's `circuitBreaker(handleWhen(isFailure), { halfOpenAfter,
 * breaker: new ConsecutiveBreaker(threshold) })` behaves, without the async layers, executor and
 * event emitters that policy puts around every call (every etcd call passes through one):
 * - closed: calls run; `threshold` failures in a row (errors `isFailure` counts) open it, a success
 *   resets the count, and any other error leaves the count as it was;
 * - open: calls are refused with cockatiel's BrokenCircuitError (etcd-client.ts maps it) until
 *   `halfOpenAfterMs` have passed;
 * - half-open: one call tries; calls arriving meanwhile wait for its outcome and then run as the
 *   breaker then says. Its success (or an error that is not a failure) closes the breaker, a failure
 *   opens it again for another `halfOpenAfterMs`.
 */
import { BrokenCircuitError } from 'cockatiel';

export class CircuitBreaker {
  private failures = 0;
  /** When the breaker opened; undefined while closed. */
  private openedAt: number | undefined;
  /** The half-open trial call, while it runs. */
  private trial: Promise<unknown> | undefined;

  constructor(
    private readonly isFailure: (err: unknown) => boolean,
    private readonly threshold = 3,
    private readonly halfOpenAfterMs = 5000,
    private readonly now: () => number = Date.now,
  ) {}

  run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.trial) {
      const again = (): Promise<T> => this.run(fn);
      return this.trial.then(again, again);
    }
    if (this.openedAt === undefined) return this.attempt(fn, false);
    if (this.now() - this.openedAt < this.halfOpenAfterMs) return Promise.reject(new BrokenCircuitError());
    const trial = this.attempt(fn, true);
    this.trial = trial;
    const done = (): void => {
      if (this.trial === trial) this.trial = undefined;
    };
    trial.then(done, done);
    return trial;
  }

  private attempt<T>(fn: () => Promise<T>, trial: boolean): Promise<T> {
    let running: Promise<T>;
    try {
      running = fn();
    } catch (err) {
      running = Promise.reject(err as Error);
    }
    return running.then(
      (value) => {
        this.failures = 0;
        if (trial) this.openedAt = undefined;
        return value;
      },
      (err: unknown) => {
        if (!this.isFailure(err)) {
          if (trial) this.openedAt = undefined;
        } else if ((++this.failures >= this.threshold && this.openedAt === undefined) || trial) {
          // A call that started before the breaker opened does not hold it open longer.
          this.openedAt = this.now();
        }
        throw err;
      },
    );
  }
}
