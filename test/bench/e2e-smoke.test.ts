import { formatE2eTable, runE2eBench } from '../../bench/e2e.js';

describe('bench/e2e', () => {
  it('issues certificates for bootstrap clients through both processes', async () => {
    const r = await runE2eBench({ concurrency: 2, durationMs: 5000, maxCsrs: 4, fixedRate: 4, fixedRateMs: 500, warmup: 1, tokens: 2, distinctRequests: 2 });
    expect(r).toMatchObject({ name: 'e2e', params: { storage: 'sqlite' } });
    expect(r.sustained).toMatchObject({ issued: 4, errors: 0 });
    expect(r.fixedRate).toMatchObject({ issued: 2, errors: 0, offeredPerSec: 4 });
    expect(r.sustained.latencyMs.count).toBe(4);
    expect(r.apiRequestsPerCsr.total).toBeCloseTo(r.apiRequestsPerCsr.controller + 1, 1);
    expect(r.apiRequestsPerCsr.controller).toBeGreaterThan(0);
    expect(r.controllerRetriesPerCsr).toBeGreaterThanOrEqual(0);
    expect(r.peakRssMb.apiserver).toBeGreaterThan(0);
    expect(r.peakRssMb.controller).toBeGreaterThan(0);
    // /proc ticks are 10 ms: a few CSRs through both processes cost more than one tick in total.
    expect(r.cpuMsPerCsr.apiserver + r.cpuMsPerCsr.controller).toBeGreaterThan(0);
    expect(r.cpuMsPerCsr.clients).toBeGreaterThanOrEqual(0);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(formatE2eTable(r).split('\n')).toHaveLength(4);
  }, 180_000);
});
