import { formatCacheTable, runCacheBench } from '../../bench/cache.js';

describe('bench/cache', () => {
  it('measures the informer and the controller with a few issued CSRs cached', async () => {
    const r = await runCacheBench({ sizes: [40], settleMs: 0 });
    expect(r).toMatchObject({ name: 'cache', controllerMeasured: true, params: { sizes: [40] } });
    expect(r.params.objectJsonBytes).toBeGreaterThan(1000); // request + certificate PEMs
    expect(r.results.map((row) => row.csrs)).toEqual([40]);
    for (const row of r.results) {
      for (const m of [row.informer, row.controller]) {
        expect(m?.rssMb).toBeGreaterThan(0);
        expect(m?.peakRssMb).toBeGreaterThanOrEqual(m?.rssMb ?? Infinity);
      }
      expect(row.informer.heapUsedMb).toBeGreaterThan(0);
    }
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(formatCacheTable(r).split('\n')).toHaveLength(2 + 1);
  }, 180_000);
});
