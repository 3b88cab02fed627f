import { LoopSaturation } from './loop-saturation.js';

/** Busy for `ms` of wall time: the event loop is blocked, as a storm's handshakes block it. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('event-loop saturation', () => {
  /** `n` samples of a timer due every 20 ms. */
  const feed = (loop: LoopSaturation, n: number, lagMs: number, busy: number): void => {
    for (let i = 0; i < n; i++) loop.observe(lagMs, busy, 20 + lagMs);
  };

  it('is saturated only when the loop is both busy and late, for long enough', () => {
    const loop = new LoopSaturation({ maxDelayMs: 250 });
    feed(loop, 50, 1, 0.1);
    expect(loop.saturated).toBe(false);
    // One 300 ms pause (a major GC) in an otherwise idle second is no queue.
    feed(loop, 1, 300, 0.95);
    expect(loop.delayMs).toBeGreaterThan(100);
    expect(loop.saturated).toBe(false);
    feed(loop, 50, 1, 0.1);
    // A descheduled process: timers late, the loop idle.
    feed(loop, 10, 400, 0.05);
    expect(loop.delayMs).toBeGreaterThan(250);
    expect(loop.saturated).toBe(false);
    feed(loop, 50, 1, 0.1);
    // A storm: every turn of the loop takes 300 ms of work.
    let samples = 0;
    while (!loop.saturated && samples < 100) {
      feed(loop, 1, 300, 1);
      samples++;
    }
    expect(samples).toBeGreaterThanOrEqual(3);
    expect(samples).toBeLessThanOrEqual(5);
    // Half a second after the storm stops, the loop is not saturated any more.
    feed(loop, 25, 1, 0.1);
    expect(loop.saturated).toBe(false);
  });

  it('is never saturated with no limit', () => {
    const loop = new LoopSaturation({ maxDelayMs: 0 });
    feed(loop, 50, 5_000, 1);
    expect(loop.delayMs).toBeGreaterThan(4_000);
    expect(loop.saturated).toBe(false);
  });

  it('measures a blocked loop, and sees it recover', async () => {
    const loop = new LoopSaturation({ maxDelayMs: 50, sampleMs: 10, windowMs: 200 });
    loop.start();
    try {
      expect(loop.saturated).toBe(false);
      for (let i = 0; i < 8; i++) {
        block(100);
        // Lets the sampling timer fire, late, between two blocks, without the loop sleeping (it
        // would count as idle, and a loaded machine may wake it late).
        await new Promise((r) => setImmediate(r));
      }
      expect(loop.delayMs).toBeGreaterThanOrEqual(50);
      expect(loop.utilization).toBeGreaterThanOrEqual(0.9);
      expect(loop.saturated).toBe(true);
      await sleep(1_000);
      expect(loop.saturated).toBe(false);
      expect(loop.utilization).toBeLessThan(0.9);
    } finally {
      loop.stop();
    }
  });

  it('pauses while the server is idle, and a request resumes it', async () => {
    const loop = new LoopSaturation({ maxDelayMs: 50, sampleMs: 10, windowMs: 200 });
    loop.start();
    try {
      await sleep(200);
      expect(loop.paused).toBe(true);
      loop.request();
      expect(loop.paused).toBe(false);
      // Requests keep it sampling a blocked loop, which it sees saturated.
      for (let i = 0; i < 8; i++) {
        loop.request();
        block(100);
        await new Promise((r) => setImmediate(r));
      }
      expect(loop.paused).toBe(false);
      expect(loop.saturated).toBe(true);
      // Idle again: it pauses, and what it reads then counts the pause as an idle, timely stretch.
      await sleep(1_000);
      expect(loop.paused).toBe(true);
      expect(loop.saturated).toBe(false);
      expect(loop.delayMs).toBeLessThan(50);
      expect(loop.utilization).toBeLessThan(0.9);
    } finally {
      loop.stop();
    }
  });
});
