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

export interface LoopSaturationOptions {
  /** Smoothed delay at which the loop is saturated (0: never). */
  maxDelayMs: number;
  /** How often the loop is sampled (default 20 ms). */
  sampleMs?: number;
  /** Time constant of the smoothing (default 500 ms): a step is 63% seen after it. */
  windowMs?: number;
}

export class LoopSaturation {
  /** Smoothed delay of the loop, ms. */
  delayMs = 0;
  /** Smoothed share of the time the loop was busy, 0 to 1. */
  utilization = 0;
  readonly maxDelayMs: number;
  private readonly sampleMs: number;
  private readonly windowMs: number;
  private timer: NodeJS.Timeout | undefined;
  private lastAt = 0;
  private lastElu: ReturnType<typeof performance.eventLoopUtilization> | undefined;

  constructor(opts: LoopSaturationOptions) {
    this.maxDelayMs = opts.maxDelayMs;
    this.sampleMs = opts.sampleMs ?? 20;
    this.windowMs = opts.windowMs ?? 500;
  }

  get saturated(): boolean {
    return this.maxDelayMs > 0 && this.delayMs >= this.maxDelayMs && this.utilization >= SATURATED_UTILIZATION;
  }

  /** Samples the loop until `stop`; the timer keeps no process alive. */
  start(): void {
    if (this.timer || this.maxDelayMs <= 0) return;
    this.lastAt = performance.now();
    this.lastElu = performance.eventLoopUtilization();
    this.timer = setInterval(() => this.sample(), this.sampleMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * One sample: the timer fired `lagMs` late, the loop was busy `busy` of the `elapsedMs` since the
   * last one. The weight of a sample grows with the time it covers, so one long block counts as
   * much as the many short samples it stands for.
   */
  observe(lagMs: number, busy: number, elapsedMs: number): void {
    const weight = 1 - Math.exp(-Math.max(0, elapsedMs) / this.windowMs);
    this.delayMs += weight * (Math.max(0, lagMs) - this.delayMs);
    this.utilization += weight * (Math.min(1, Math.max(0, busy)) - this.utilization);
  }

  private sample(): void {
    const now = performance.now();
    const elu = performance.eventLoopUtilization();
    const busy = this.lastElu ? performance.eventLoopUtilization(elu, this.lastElu).utilization : 0;
    const elapsed = now - this.lastAt;
    this.observe(elapsed - this.sampleMs, busy, elapsed);
    this.lastAt = now;
    this.lastElu = elu;
  }
}
