/** Time as a dependency, so queues, rate limiters and cleaners can be tested with a fake clock. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

export interface TimerHandle {
  cancel(): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

/** A manually advanced clock: timers fire, in due order, only when `advance` passes them. */
export class FakeClock implements Clock {
  private current: number;
  private timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];
  private seq = 0;

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** Moves time forward by `ms`, firing every timer due on the way in time order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => !t.cancelled && t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.current = due.at;
      due.cancelled = true;
      due.fn();
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.current = target;
  }

  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}

/** Node timers overflow past 2^31-1 ms (and then fire at once): longer sleeps are capped there. */
const MAX_TIMER_MS = 2_147_483_647;

/** Resolves after `ms` on the given clock, or early (without rejecting) once `signal` aborts. */
export function sleep(
  clock: Pick<Clock, 'setTimeout'>,
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
    }, Math.min(ms, MAX_TIMER_MS));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs `pass` now and then every `intervalMs` until `signal` aborts (wait.Until upstream). */
export async function everyInterval(clock: Pick<Clock, 'setTimeout'>, intervalMs: number, signal: AbortSignal, pass: () => Promise<unknown>): Promise<void> {
  while (!signal.aborted) {
    await pass();
    await sleep(clock, intervalMs, signal);
  }
}
