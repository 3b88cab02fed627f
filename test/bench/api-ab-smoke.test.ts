import { abNodeFlags, formatApiAbTable, runApiAbBench } from '../../bench/api-ab.js';

describe('bench/api-ab', () => {
  it('runs two API servers side by side with tiny sizes and compares their CPU per request', async () => {
    const r = await runApiAbBench({ objects: 20, concurrency: 4, getMs: 300, reviewConcurrency: 4, reviewMs: 300 }, undefined, { b: ['--max-semi-space-size=16'] });
    expect(r).toMatchObject({ name: 'api-ab', a: 'this build', params: { objects: 20 }, nodeFlags: { b: ['--max-semi-space-size=16'] } });
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
    const table = formatApiAbTable(r).split('\n');
    expect(table).toHaveLength(2 + 1 + 3);
    expect(table[0]).toContain('B = this build (node --max-semi-space-size=16)');
  }, 120_000);

  it("starts each side's server with that side's node flags only", async () => {
    // A flag node refuses stops the server it reaches: on A, A fails to start.
    await expect(runApiAbBench({ objects: 2, concurrency: 1, getMs: 50, reviewConcurrency: 1, reviewMs: 50 }, undefined, { a: ['--no-such-node-flag'] })).rejects.toThrow();
    expect(abNodeFlags(' --a=1  --b ', undefined)).toEqual({ a: ['--a=1', '--b'], b: undefined });
    expect(abNodeFlags('', '--x')).toEqual({ a: undefined, b: ['--x'] });
  }, 120_000);
});
