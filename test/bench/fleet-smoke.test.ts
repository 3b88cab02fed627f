import { formatFleetTable, runFleetBench } from '../../bench/fleet.js';

describe('bench/fleet', () => {
  // The restart scenario starts `up` a second time: left to the real runs, to keep this one short; told
  // to stop after the rotation, the run skips it and does not count it unreached (stopAfter).
  // Two simulator processes, so the samples and node counts are merged across them.
  it('joins, holds and rotates a few simulated kubelets against up, and ends after the scenario it is told to', async () => {
    const r = await runFleetBench({ nodes: 3, workers: 2, joinSpreadMs: 300, steadyMs: 1_000, rotationSpreadMs: 500, scenarioTimeoutMs: 90_000, stopAfter: 'rotation' });
    expect(r.params).toMatchObject({ workers: 2, restart: true });
    expect(Object.keys(r.phases)).toEqual(['join', 'steady', 'rotation']);
    expect(Object.values(r.phases).map((p) => p.reached)).toEqual([true, true, true]);
    expect(r.slo.everyScenarioReached).toBe(true);
    expect(r.joinStormSeconds).toBeGreaterThan(0);
    // Each node: a client CSR, its Node, status, Lease and a serving CSR; two lists; a rotation CSR.
    expect(r.phases.join?.mutatingMs.count).toBeGreaterThanOrEqual(3 * 5);
    expect(r.phases.join?.listMs.count).toBe(3 * 2);
    expect(r.phases.rotation?.mutatingMs.count).toBeGreaterThanOrEqual(3);
    // The first request on each new connection (two per join) waited for its handshakes, counted apart.
    expect(r.phases.join?.connectWaitMs.count).toBeGreaterThanOrEqual(3 * 2);
    expect(r.connectWaitP99Ms).toBeGreaterThan(0);
    // The kernel's accept queue on up's port, sampled in every phase.
    expect(Object.values(r.phases).every((p) => Number.isInteger(p.acceptQueueMax) && p.acceptQueueMax >= 0)).toBe(true);
    expect(r.errors).toBe(0);
    // up serves h2, so as client-go: one connection per credential (the bootstrap token's, then the
    // certificate's; a rotation adds the new certificate's).
    expect([r.protocol, r.connectionsPerJoin, r.connectionsPerRotation]).toEqual(['h2', 2, 1]);
    expect(r.phases.join?.generatorCpuPercent).toBeGreaterThan(0);
    expect(r.phases.join?.upMainThreadCpuPercent).toBeGreaterThan(0);
    expect(r.phases.join?.upMainThreadCpuMsPerNode).toBeGreaterThan(0);
    // Every node renewed its Lease once in the join, and the steady state's CPU is given per renewal.
    expect(r.phases.join?.leaseRenewals).toBeGreaterThanOrEqual(3);
    expect(r.phases.join?.upMainThreadCpuMsPerLeaseRenewal).toBeGreaterThan(0);
    // The controller's thread is measured apart from the main thread: it approved and issued every CSR.
    expect(Object.values(r.phases).reduce((sum, p) => sum + p.upControllerThreadCpuPercent, 0)).toBeGreaterThan(0);
    expect(r.bareConnectionCpuMs).toBeGreaterThan(0);
    expect(r.ratios.joinCpuPerNodeInBareConnections).toBeGreaterThan(0);
    expect(r.peakRssMb.apiserver).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(formatFleetTable(r).split('\n')).toHaveLength(1 + 1 + 3 + 1 + 1);
  }, 180_000);

  it('speaks HTTP/1.1 when told (--http1), though up offers h2: a connection for requests and one per watch', async () => {
    const r = await runFleetBench({ nodes: 2, workers: 1, joinSpreadMs: 200, steadyMs: 500, rotationSpreadMs: 300, scenarioTimeoutMs: 90_000, restart: false, http1: true });
    expect(Object.values(r.phases).map((p) => p.reached)).toEqual([true, true, true]);
    expect(r.errors).toBe(0);
    // The CSR's watch as a bootstrapper; the CSR's, the Node's and the pods' with the certificate; a
    // rotation: the new CSR's watch, then the two watches again on the new certificate, and its
    // connection for requests once the next one is sent (a Lease renewal, within the phase or after it).
    expect([r.protocol, r.connectionsPerJoin]).toEqual(['http/1.1', 6]);
    expect([3, 3.5, 4]).toContain(r.connectionsPerRotation);
  }, 180_000);
});
