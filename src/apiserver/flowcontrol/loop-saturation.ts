/**
 * Whether the event loop is saturated: on one thread the queue that overload builds is not flow
 * control's but the loop's (TLS handshakes, HTTP/2 frames and requests waiting for the thread), and
 * a request runs in microseconds once it has the thread, so seats are never exhausted. What a
 * request waits for is the loop, and the loop's delay says how long: a timer due every `sampleMs`
 * fires late by the length of the work ahead of it. Both the delay and the share of the time the
 * loop was busy (`performance.eventLoopUtilization`) are smoothed over `windowMs`, and the loop is
 * saturated when it is both busy (≥ 90%) and late (≥ `maxDelayMs`): a late timer on an idle loop is
 * a descheduled process or one GC pause, not a queue; a busy loop that keeps up is not late.
 */

/** The share of the time the loop must be busy to count as saturated. */
export const SATURATED_UTILIZATION = 0.9;
/** Below this share of busy time, with no request in a whole sample, the loop is idle: sampling pauses. */
const IDLE_UTILIZATION = 0.5;

export interface LoopSaturationOptions {
  /** Smoothed delay at which the loop is saturated (0: never). */
  maxDelayMs: number;
  /** How often the loop is sampled (default 20 ms). */
  sampleMs?: number;
  /** Time constant of the smoothing (default 500 ms): a step is 63% seen after it. */
  windowMs?: number;
}

/**
 * Sampling pauses while the server is idle (no request for a whole sample, the loop mostly idle), so
 * an idle server does not wake 50 times a second; the next request resumes it. A read while paused
 * first counts the pause as one sample: no timer was due then, so none was late, and the loop was
 * as busy as its utilization says.
 */
export class LoopSaturation {
  readonly maxDelayMs: number;
  private readonly sampleMs: number;
  private readonly windowMs: number;
  private delay = 0;
  private busy = 0;
  private started = false;
  private timer: NodeJS.Timeout | undefined;
  /** A request came since the last sample. */
  private requested = false;
  private lastAt = 0;
  private lastElu: ReturnType<typeof performance.eventLoopUtilization> | undefined;

  constructor(opts: LoopSaturationOptions) {
    this.maxDelayMs = opts.maxDelayMs;
    this.sampleMs = opts.sampleMs ?? 20;
    this.windowMs = opts.windowMs ?? 500;
  }

  /** Smoothed delay of the loop, ms. */
  get delayMs(): number {
    this.catchUp();
    return this.delay;
  }

  /** Smoothed share of the time the loop was busy, 0 to 1. */
  get utilization(): number {
    this.catchUp();
    return this.busy;
  }

  get saturated(): boolean {
    if (this.maxDelayMs <= 0) return false;
    this.catchUp();
    return this.delay >= this.maxDelayMs && this.busy >= SATURATED_UTILIZATION;
  }

  /** Whether sampling has paused for an idle server (until the next request). */
  get paused(): boolean {
    return this.started && this.timer === undefined;
  }

  /** Samples the loop until `stop`; the timer keeps no process alive. */
  start(): void {
    if (this.started || this.maxDelayMs <= 0) return;
    this.started = true;
    this.lastAt = performance.now();
    this.lastElu = performance.eventLoopUtilization();
    this.resume();
  }

  stop(): void {
    this.started = false;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A request arrived: sampling resumes if it had paused. */
  request(): void {
    this.requested = true;
    if (!this.started || this.timer) return;
    this.catchUp();
    this.resume();
  }

  /**
   * One sample: the timer fired `lagMs` late, the loop was busy `busy` of the `elapsedMs` since the
   * last one. The weight of a sample grows with the time it covers, so one long block counts as
   * much as the many short samples it stands for.
   */
  observe(lagMs: number, busy: number, elapsedMs: number): void {
    const weight = 1 - Math.exp(-Math.max(0, elapsedMs) / this.windowMs);
    this.delay += weight * (Math.max(0, lagMs) - this.delay);
    this.busy += weight * (Math.min(1, Math.max(0, busy)) - this.busy);
  }

  private resume(): void {
    this.timer = setInterval(() => this.sample(), this.sampleMs).unref();
  }

  private catchUp(): void {
    if (this.started && !this.timer) this.take(false);
  }

  private sample(): void {
    const busy = this.take(true);
    if (!this.requested && busy < IDLE_UTILIZATION) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    this.requested = false;
  }

  /** Observes the time since the last sample; `timed`: a timer due `sampleMs` after it fired now. Returns the busy share. */
  private take(timed: boolean): number {
    const now = performance.now();
    const elu = performance.eventLoopUtilization();
    const busy = this.lastElu ? performance.eventLoopUtilization(elu, this.lastElu).utilization : 0;
    const elapsed = now - this.lastAt;
    this.observe(timed ? elapsed - this.sampleMs : 0, busy, elapsed);
    this.lastAt = now;
    this.lastElu = elu;
    return busy;
  }
}
