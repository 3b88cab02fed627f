import { formatApiAbTable, runApiAbBench } from '../../bench/api-ab.js';

describe('bench/api-ab', () => {
  it('runs two API servers side by side with tiny sizes and compares their CPU per request', async () => {
    const r = await runApiAbBench({ objects: 20, concurrency: 4, getMs: 300, reviewConcurrency: 4, reviewMs: 300 });
    expect(r).toMatchObject({ name: 'api-ab', a: 'this build', params: { objects: 20 } });
    expect(Object.keys(r.results)).toEqual(['create', 'get', 'tokenreview']);
    expect(r.results.create.done).toEqual({ a: 20, b: 20 });
    for (const f of Object.values(r.results)) {
      // Requests alternate between the servers: each answers half, give or take the last one.
      expect(Math.abs(f.done.a - f.done.b)).toBeLessThanOrEqual(1);
      expect(f.cpuUsPerOp.a).toBeGreaterThanOrEqual(0);
      if (f.cpuUsPerOp.a > 0) expect(f.bToA).toBeCloseTo(f.cpuUsPerOp.b / f.cpuUsPerOp.a, 2);
      expect(f.load).toBeGreaterThanOrEqual(0);
    }
    expect(r.results.get.done.a).toBeGreaterThan(0);
    expect(r.peakRssMb.a).toBeGreaterThan(0);
    expect(r.peakRssMb.b).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(formatApiAbTable(r).split('\n')).toHaveLength(2 + 1 + 3);
  }, 120_000);
});
