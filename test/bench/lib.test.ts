import { closedLoop, openLoop } from '../../bench/lib/load.js';
import { formatTable } from '../../bench/lib/report.js';
import { summarize } from '../../bench/lib/stats.js';
import { formatRunsTable, summarizeRuns } from '../../bench/lib/runs.js';

describe('bench/lib', () => {
  it('formats a table with aligned columns', () => {
    const lines = formatTable(['op', 'n/s'], [['create', '5'], ['get', '12345']]).split('\n');
    expect(lines).toEqual(['op        n/s', 'create      5', 'get     12345']);
  });

  it('summarises latencies with nearest-rank percentiles', () => {
    const s = summarize(Array.from({ length: 100 }, (_, i) => 100 - i));
    expect(s).toEqual({ count: 100, p50: 50, p90: 90, p99: 99, max: 100 });
    expect(summarize([])).toEqual({ count: 0, p50: 0, p90: 0, p99: 0, max: 0 });
  });

  it('bounds a closed loop by count and counts failures', async () => {
    const seen: number[] = [];
    const r = await closedLoop({ concurrency: 3, maxOps: 10, maxMs: 10_000, op: async (i) => {
      seen.push(i);
      if (i === 4) throw new Error('boom');
    } });
    expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(r).toMatchObject({ ok: 9, errors: 1, firstError: 'boom' });
    expect(r.latencyMs.count).toBe(9);
  });

  it('bounds a closed loop by time', async () => {
    const r = await closedLoop({ concurrency: 1, maxOps: Number.MAX_SAFE_INTEGER, maxMs: 100, op: () => new Promise((res) => setTimeout(res, 10)) });
    expect(r.ok).toBeGreaterThan(0);
    expect(r.ok).toBeLessThan(50);
  });

  it('starts an open loop at the offered rate and counts operations that never finish', async () => {
    let started = 0;
    const r = await openLoop({ ratePerSec: 100, durationMs: 100, drainMs: 200, op: (i) => {
      started++;
      return i === 0 ? new Promise(() => {}) : Promise.resolve();
    } });
    expect(started).toBe(10);
    expect(r).toMatchObject({ ok: 9, errors: 1 });
  });

  it('keeps every run and gives the median and range of each figure, parameters left out', () => {
    const run = (perSec: number, p99: number): object => ({ name: 'x', params: { n: 5 }, cores: 2, results: { create: { perSec, latencyMs: { p99 } } } });
    const r = summarizeRuns('x', [run(100, 9), run(300, 5), run(200, 7), run(150, 30)]);
    expect(r.results).toHaveLength(4);
    expect(r.summary).toEqual({
      'results.create.perSec': { median: 175, min: 100, max: 300 },
      'results.create.latencyMs.p99': { median: 8, min: 5, max: 30 },
    });
    expect(formatRunsTable(r).split('\n')).toHaveLength(4);
  });
});
