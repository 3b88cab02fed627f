import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { RequestDeadlines } from './request-timeout.js';

/** A response as the deadline reads it: whether its headers are out and its body ended; how often it was aborted (destroy). */
const response = (headersSent = false, writableEnded = false): ServerResponse & { aborts: number } => {
  const res = { headersSent, writableEnded, aborts: 0, destroy: () => void res.aborts++ };
  return res as unknown as ServerResponse & { aborts: number };
};

/** A handler that settles when told to. */
function pending(): { work: Promise<void>; resolve(): void; reject(err: Error): void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const work = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { work, resolve, reject };
}

/** How a race ended, and when (ms after it started). */
async function outcome(p: Promise<void>, start: number): Promise<{ code?: number; message?: string; ok?: true; afterMs: number }> {
  try {
    await p;
    return { ok: true, afterMs: performance.now() - start };
  } catch (err) {
    const e = err as { code?: number; message?: string };
    return { code: e.code, message: e.message, afterMs: performance.now() - start };
  }
}

describe('RequestDeadlines', () => {
  const warnings: unknown[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  let deadlines: RequestDeadlines;
  beforeEach(() => {
    warnings.length = 0;
    deadlines = new RequestDeadlines(logger);
  });
  afterEach(() => deadlines.close());

  it('answers 504 at each deadline whatever finished before it, and the outcome of every request that finished in time', async () => {
    const start = performance.now();
    // Requests of one duration, set in turn: the first finishes, the second times out, the third
    // finishes, the fourth fails on its own before its deadline; one of a shorter duration comes due first.
    const works = [pending(), pending(), pending(), pending(), pending()];
    const raced = [
      deadlines.race(works[0]!.work, 150, start, response()),
      deadlines.race(works[1]!.work, 150, start + 10, response()),
      deadlines.race(works[2]!.work, 150, start + 20, response()),
      deadlines.race(works[3]!.work, 150, start + 30, response()),
      deadlines.race(works[4]!.work, 40, start, response()),
    ].map((p) => outcome(p, start));
    works[0]!.resolve();
    works[2]!.resolve();
    works[3]!.reject(new Error('refused'));
    const [first, second, third, fourth, short] = await Promise.all(raced);
    expect(first).toMatchObject({ ok: true });
    expect(first!.afterMs).toBeLessThan(150);
    expect(second).toMatchObject({ code: 504, message: 'Timeout: request did not complete within requested timeout - context deadline exceeded' });
    expect(second!.afterMs).toBeGreaterThanOrEqual(160);
    expect(third).toMatchObject({ ok: true });
    expect(fourth).toMatchObject({ message: 'refused' });
    expect(short).toMatchObject({ code: 504 });
    expect(short!.afterMs).toBeGreaterThanOrEqual(40);
    expect(short!.afterMs).toBeLessThan(second!.afterMs);
    // What the timed-out handler does afterwards is dropped; an error it ends with is logged.
    works[1]!.reject(new Error('late'));
    works[4]!.resolve();
    await sleep(10);
    expect(warnings).toEqual([expect.objectContaining({ msg: 'request failed after its timeout was answered', err: expect.objectContaining({ message: 'late' }) })]);
  });

  it('aborts a response whose headers are out and body unfinished, and leaves an ended one whole', async () => {
    const start = performance.now();
    const [begun, ended] = [pending(), pending()];
    const [begunRes, endedRes] = [response(true), response(true, true)];
    const raced = [outcome(deadlines.race(begun.work, 20, start, begunRes), start), outcome(deadlines.race(ended.work, 20, start, endedRes), start)];
    await sleep(60);
    // Past the 20 ms deadline by the clock the race reads, not by the timer's (which may fire a little early).
    const resolvedAfterMs = performance.now() - start;
    expect([begunRes.aborts, endedRes.aborts]).toEqual([1, 0]);
    begun.resolve();
    ended.resolve();
    // Neither is answered with a 504 (its headers are out): each race ends with its handler.
    for (const r of await Promise.all(raced)) {
      expect(r).toMatchObject({ ok: true });
      expect(r.afterMs).toBeGreaterThanOrEqual(resolvedAfterMs);
    }
    expect(resolvedAfterMs).toBeGreaterThan(20);
  });

  it('times the deadlines of a duration again once the last one has gone', async () => {
    for (let round = 0; round < 2; round++) {
      const start = performance.now();
      const w = pending();
      expect(await outcome(deadlines.race(w.work, 20, start, response()), start)).toMatchObject({ code: 504 });
      w.resolve();
    }
  });
});
