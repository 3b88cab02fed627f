import { formatApiTable, runApiBench } from '../../bench/api.js';

describe('bench/api', () => {
  it('measures every operation on both servers with tiny sizes', async () => {
    const r = await runApiBench({ objects: 30, concurrency: 4, getMs: 200, pageSize: 7, listRounds: 1, watchers: 3, watchEvents: 5, reviewConcurrency: 4, reviewMs: 200 });
    expect(r).toMatchObject({ name: 'api', storage: 'sqlite', params: { objects: 30, watchers: 3 } });
    expect(Object.keys(r.results)).toEqual(['create', 'get', 'list', 'watch', 'tokenreview']);
    for (const f of Object.values(r.results)) {
      for (const side of [f.bare, f.api]) {
        expect(side.errors).toBe(0);
        expect(side.perSec).toBeGreaterThan(0);
        expect(side.latencyMs.p50).toBeLessThanOrEqual(side.latencyMs.max);
      }
      expect(f.ratio).toBeCloseTo(f.api.perSec / f.bare.perSec, 2);
    }
    expect(r.results.create.api.latencyMs.count).toBe(30);
    expect(r.results.list.api.latencyMs.count).toBe(5); // ceil(30 / 7) pages
    expect(r.results.watch.api.latencyMs.count).toBe(15); // every event at every watcher
    expect(r.apiserverPeakRssMb).toBeGreaterThan(0);
    expect(r.cores).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(formatApiTable(r).split('\n')).toHaveLength(3 + 5);
  }, 120_000);
});
