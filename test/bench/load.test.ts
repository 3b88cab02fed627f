import { alternatedClosedLoops, closedLoop } from '../../bench/lib/load.js';

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 1));

describe('bench/lib/load', () => {
  it('runs a closed loop until its operation count', async () => {
    const seen: number[] = [];
    const r = await closedLoop({ concurrency: 3, maxOps: 10, maxMs: 10_000, op: async (i) => void seen.push(i) });
    expect(r.ok).toBe(10);
    expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('alternates two sides slice by slice, A B then B A, each numbering its operations on', async () => {
    const order: number[] = [];
    const indices: [number[], number[]] = [[], []];
    const op = (k: 0 | 1) => async (i: number): Promise<void> => {
      if (order.at(-1) !== k) order.push(k);
      indices[k].push(i);
      await tick();
      if (k === 1 && i === 3) throw new Error('refused');
    };
    const slices: number[] = [];
    const [a, b] = await alternatedClosedLoops({
      concurrency: 2,
      msEach: 200,
      slices: 4,
      ops: [op(0), op(1)],
      slice: async (k, run) => {
        slices.push(k);
        await run();
      },
    });
    expect(slices).toEqual([0, 1, 1, 0, 0, 1, 1, 0]);
    expect(order).toEqual([0, 1, 0, 1, 0]);
    for (const [k, r] of [a, b].entries()) {
      const done = indices[k as 0 | 1];
      expect(done.sort((x, y) => x - y)).toEqual(Array.from({ length: done.length }, (_, i) => i));
      expect(r.ok + r.errors).toBe(done.length);
      // Each side ran its four slices of 50 ms, not the whole time.
      expect(r.seconds).toBeGreaterThanOrEqual(0.19);
      expect(r.seconds).toBeLessThan(0.4);
    }
    expect(a.errors).toBe(0);
    expect(b.errors).toBe(1);
    expect(b.firstError).toBe('refused');
  });

  it('runs each side of an alternated pair at its own concurrency', async () => {
    const inFlight = [0, 0];
    const most = [0, 0];
    const op = (k: 0 | 1) => async (): Promise<void> => {
      inFlight[k] = (inFlight[k] ?? 0) + 1;
      most[k] = Math.max(most[k] ?? 0, inFlight[k] ?? 0);
      await new Promise((r) => setTimeout(r, 2));
      inFlight[k] = (inFlight[k] ?? 0) - 1;
    };
    const [a, b] = await alternatedClosedLoops({ concurrency: [1, 3], msEach: 60, slices: 2, ops: [op(0), op(1)] });
    expect(most).toEqual([1, 3]);
    expect(a.ok).toBeGreaterThan(0);
    expect(b.ok).toBeGreaterThan(a.ok);
  });
});
