/**
 * Exponential backoff with jitter, shared by watch reconnects and lease retries. Jitter spreads
 * reconnect storms when many clients lose the same API server at once.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Multiplier per step; 2 doubles. */
  factor?: number;
  /** Adds up to `jitter` × the delay, at random (client-go's wait.Jitter). */
  jitter?: number;
  random?: () => number;
}

export class Backoff {
  private step = 0;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(private readonly opts: BackoffOptions) {
    this.factor = opts.factor ?? 2;
    this.jitter = opts.jitter ?? 0;
    this.random = opts.random ?? Math.random;
  }

  /** The delay before the next attempt; each call grows the following one until the cap. */
  next(): number {
    const base = Math.min(this.opts.maxMs, this.opts.initialMs * this.factor ** this.step);
    if (base < this.opts.maxMs) this.step++;
    return Math.min(this.opts.maxMs, base + base * this.jitter * this.random());
  }

  /** Back to the initial delay, after something went well. */
  reset(): void {
    this.step = 0;
  }
}

/** Resolves after `ms` on the given clock, or early (without rejecting) once `signal` aborts. */
export function sleep(
  clock: { setTimeout(fn: () => void, ms: number): { cancel(): void } },
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
