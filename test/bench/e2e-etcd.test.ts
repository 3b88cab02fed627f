import { coresBusy, formatEtcdRatioTable, secondReplicaCost, type EtcdRatioResult, type EtcdRatioRow } from '../../bench/e2e-etcd.js';

const row = (csrsPerSec: number, fixed: EtcdRatioRow['fixedRate']['cpuMsPerCsr']): EtcdRatioRow => ({
  csrsPerSec,
  p99Ms: 100,
  errors: 0,
  cpuMsPerCsr: { apiserver: 2, controller: 1, clients: 0.3, etcd: 1 },
  coresBusy: coresBusy(csrsPerSec, { apiserver: 2, controller: 1, clients: 0.3, etcd: 1 }),
  fixedRate: { csrsPerSec: 100, cpuMsPerCsr: fixed },
  controllerQueueMs: { csrapproving: { wait: csrsPerSec / 100, work: 2.5 } },
});

describe('bench/e2e-etcd', () => {
  it("gives the second replica's added CPU per CSR by process, and in all", () => {
    const one = { apiserver: 1.71, controller: 1, clients: 0.32, etcd: 0.93 };
    const two = { apiserver: 2.59, controller: 1.17, clients: 0.42, etcd: 1.16, replicas: [1.89, 0.7] };
    expect(secondReplicaCost(one, two)).toEqual({ apiserver: 0.88, controller: 0.17, clients: 0.1, etcd: 0.23, total: 1.38 });
    // SQLite's row has no etcd: it counts as 0, never NaN.
    expect(secondReplicaCost({ apiserver: 1, controller: 1, clients: 0 }, { apiserver: 1.5, controller: 1, clients: 0 }).total).toBe(0.5);
  });

  it("gives the cores a closed loop kept busy from every process's CPU per CSR", () => {
    // Session 13's quiet-host etcd round: 545 CSRs/s at 1.4 + 0.72 + 0.27 + 0.75 ms per CSR.
    expect(coresBusy(545, { apiserver: 1.4, controller: 0.72, clients: 0.27, etcd: 0.75 })).toBe(1.71);
    // SQLite's row has no etcd.
    expect(coresBusy(773, { apiserver: 1.2, controller: 0.63, clients: 0.24 })).toBe(1.6);
  });

  it('prints each store on its line, with the fixed rate and the added cost', () => {
    const one = { apiserver: 1.7, controller: 1, clients: 0.3, etcd: 0.9 };
    const two = { apiserver: 2.4, controller: 1.1, clients: 0.35, etcd: 1.1, replicas: [1.6, 0.8] };
    const r: EtcdRatioResult = {
      name: 'e2e-etcd',
      sqlite: row(400, { apiserver: 1.8, controller: 1, clients: 0.3 }),
      etcd: { ...row(450, one), etcdRequestsPerCsr: { create: 1, update: 2 }, etcdRpcsPerCsr: { Txn: 3, WatchResponses: 3.01 } },
      etcdX2: row(350, two),
      ratios: { etcdToSqlite: 1.125, twoReplicasToOne: 0.778 },
      secondReplicaMsPerCsr: secondReplicaCost(one, two),
      cores: 2,
      node: 'v24',
    };
    const table = formatEtcdRatioTable(r);
    expect(table).toContain('100: 2.4 (1.6 + 0.8) / 1.1 / 0.35 / 1.1');
    expect(table).toMatch(/SQLite +400 +100 +0 +1\.72 +2 \/ 1 \/ 0\.3 \/ 1 /);
    expect(table).toContain('the second replica adds per CSR at the fixed rate: 1.05 ms (apiservers 0.7, controller 0.1, clients 0.05, etcd 0.2)');
    expect(table).toContain('etcd calls per CSR: store create 1, update 2; etcd received Txn 3, WatchResponses 3.01');
    expect(table).toContain('etcd x2 calls per CSR: store -; etcd received -');
    expect(table).toContain('SQLite controller queues, ms waited / worked: csrapproving 4 / 2.5');
    expect(table).toContain('etcd x2 controller queues, ms waited / worked: csrapproving 3.5 / 2.5');
  });
});
