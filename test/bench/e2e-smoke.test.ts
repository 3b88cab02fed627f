import { formatE2eTable, runE2eBench } from '../../bench/e2e.js';

describe('bench/e2e', () => {
  it('issues certificates for bootstrap clients through both processes', async () => {
    // The warm-up uses up the separate Events (10 per reason) so the measured CSRs show the steady state.
    const r = await runE2eBench({ concurrency: 4, durationMs: 20_000, maxCsrs: 40, bareMs: 500, fixedRate: 4, fixedRateMs: 500, warmup: 12, tokens: 2, distinctRequests: 4 });
    expect(r).toMatchObject({ name: 'e2e', params: { storage: 'sqlite' } });
    expect(r.sustained).toMatchObject({ issued: 40, errors: 0 });
    expect(r.fixedRate).toMatchObject({ issued: 2, errors: 0, offeredPerSec: 4 });
    expect(r.sustained.latencyMs.count).toBe(40);
    // Create, SubjectAccessReview, /approval, /status: no read before a write, nothing retried.
    expect(r.apiRequestsPerCsr.csr).toBeLessThanOrEqual(4);
    expect(r.apiRequestsPerCsr.byMethod).toMatchObject({ GET: 0, PATCH: 0, DELETE: 0 });
    // Events are amortised: a few series updates at most while 40 CSRs were issued, not one per decision.
    expect(r.apiRequestsPerCsr.events).toBeLessThanOrEqual(0.1);
    expect(r.apiRequestsPerCsr.total).toBeCloseTo(r.apiRequestsPerCsr.csr + r.apiRequestsPerCsr.events, 1);
    expect(r.apiRequestsPerCsr.total).toBeCloseTo(r.apiRequestsPerCsr.controller + 1, 1);
    expect(r.controllerRetriesPerCsr).toBeGreaterThanOrEqual(0);
    // Every measured CSR went through the approver's and the kubelet client signer's queues, and a
    // worker spent time on each (a wait may round to 0 ms when a worker is idle).
    expect(r.controllerQueueMs.csrapproving!.work).toBeGreaterThan(0);
    expect(r.controllerQueueMs['csrsigning-kubelet-client']!.work).toBeGreaterThan(0);
    expect(r.peakRssMb.apiserver).toBeGreaterThan(0);
    expect(r.peakRssMb.controller).toBeGreaterThan(0);
    // /proc ticks are 10 ms: a few CSRs through both processes cost more than one tick in total.
    expect(r.cpuMsPerCsr.apiserver + r.cpuMsPerCsr.controller).toBeGreaterThan(0);
    expect(r.cpuMsPerCsr.clients).toBeGreaterThanOrEqual(0);
    // The fixed rate's CPU comes by process too; on SQLite there is no etcd and one replica.
    expect(Object.keys(r.fixedRate.cpuMsPerCsr).sort()).toEqual(['apiserver', 'clients', 'controller']);
    expect(r.fixedRate.cpuMsPerCsr.clients).toBeGreaterThanOrEqual(0);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(r.bareCreatesPerSec).toBeGreaterThan(0);
    expect(r.csrsToQuarterBareCreates).toBeCloseTo(r.sustained.csrsPerSec / (r.bareCreatesPerSec / 4), 2);
    expect(formatE2eTable(r).split('\n')).toHaveLength(6);
    expect(formatE2eTable(r)).toMatch(/controller queues in the closed loop, ms an item waited \/ a worker spent: .*csrapproving [\d.]+ \/ [\d.]+/);
  }, 180_000);
});
