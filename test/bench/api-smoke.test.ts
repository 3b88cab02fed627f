import { formatApiTable, runApiBench } from '../../bench/api.js';

describe('bench/api', () => {
  it('measures every operation on both servers with tiny sizes', async () => {
    const r = await runApiBench({ objects: 30, concurrency: 4, getMs: 200, pageSize: 7, listRounds: 1, watchers: 3, watchEvents: 5, reviewConcurrency: 4, reviewMs: 200, warmupMs: 100 });
    expect(r).toMatchObject({ name: 'api', storage: 'sqlite', params: { objects: 30, watchers: 3 } });
    expect(Object.keys(r.results)).toEqual(['create', 'get', 'list', 'watch', 'tokenreview']);
    for (const f of Object.values(r.results)) {
      for (const side of [f.bare, f.api]) {
        expect(side.errors).toBe(0);
        expect(side.perSec).toBeGreaterThan(0);
        expect(side.latencyMs.p50).toBeLessThanOrEqual(side.latencyMs.max);
        // /proc counts CPU in 10 ms ticks, so a phase this small may show none.
        expect(side.cpuUsPerOp).toBeGreaterThanOrEqual(0);
      }
      expect(f.ratio).toBeCloseTo(f.api.perSec / f.bare.perSec, 2);
    }
    expect(r.results.create.api.latencyMs.count).toBe(30);
    expect(r.results.create.api.done).toBe(30);
    expect(r.results.list.bare.done).toBe(30);
    expect(r.results.list.api.done).toBe(31); // and the namespace's kube-root-ca.crt
    // 200 ms of back-to-back GETs keep both servers busy for several ticks.
    expect(r.results.get.api.cpuUsPerOp).toBeGreaterThan(0);
    expect(r.results.get.bare.cpuUsPerOp).toBeGreaterThan(0);
    expect(r.results.get.cpuRatio).toBeCloseTo(r.results.get.bare.cpuUsPerOp / r.results.get.api.cpuUsPerOp, 2);
    expect(r.results.list.api.latencyMs.count).toBe(5); // ceil(30 / 7) pages
    expect(r.results.watch.api.latencyMs.count).toBe(15); // every event at every watcher
    expect(r.apiserverPeakRssMb).toBeGreaterThan(0);
    expect(r.cores).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(r.ratios.createToBareCreate).toBe(r.results.create.ratio);
    // tokenreview's reviews are divided by the bare GETs of its own turns, not by the get phase's.
    const bareGet = r.results.tokenreview.bareGet;
    expect(bareGet.errors).toBe(0);
    expect(bareGet.done).toBeGreaterThan(0);
    expect(bareGet.latencyMs.count).toBe(bareGet.done);
    expect(r.ratios.tokenReviewToBareGet).toBeCloseTo(r.results.tokenreview.api.perSec / bareGet.perSec, 2);
    // Every review of every turn is counted once.
    expect(r.results.tokenreview.api.latencyMs.count).toBe(r.results.tokenreview.api.done);
    // The API server's GC in each phase, from its /metrics: its young generation is never empty.
    for (const f of Object.values(r.results)) {
      expect(f.api.gc?.youngGenMb.start).toBeGreaterThan(0);
      expect(f.api.gc?.youngGenMb.end).toBeGreaterThan(0);
      expect(f.api.gc?.scavenges).toBeGreaterThanOrEqual(0);
      expect(f.api.gc?.fullGcs).toBeGreaterThanOrEqual(0);
      expect(f.api.gc?.pauseMs).toBeGreaterThanOrEqual(0);
      expect(f.bare.gc).toBeUndefined();
    }
    expect(formatApiTable(r).split('\n')).toHaveLength(4 + 5 + 1 + 2);
  }, 120_000);
});
