import { formatNodeAuthzTable, runNodeAuthzBench } from '../../bench/node-authz-ab.js';

describe('bench/node-authz-ab', () => {
  it("runs two API servers side by side with tiny sizes and compares their CPU per node Secret GET", async () => {
    const r = await runNodeAuthzBench({ pods: 20, phaseMs: 300 });
    expect(r).toMatchObject({ name: 'node-authz-ab', a: 'this build', params: { pods: 20, nodes: 2 } });
    expect(Object.keys(r.results)).toEqual(['allowed', 'refused']);
    for (const f of Object.values(r.results)) {
      // Requests alternate between the servers: each answers half, give or take the last one.
      expect(f.done.a).toBeGreaterThan(0);
      expect(Math.abs(f.done.a - f.done.b)).toBeLessThanOrEqual(1);
      if (f.cpuUsPerOp.a > 0) expect(f.bToA).toBeCloseTo(f.cpuUsPerOp.b / f.cpuUsPerOp.a, 2);
    }
    expect(Number.isFinite(r.graphKbPer1000Pods)).toBe(true);
    expect(formatNodeAuthzTable(r)).toContain('node graph');
  }, 120_000);
});
