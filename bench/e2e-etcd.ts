/**
 * Issue 26's throughput figures in one run: `e2e` on SQLite, on etcd with one API server and on etcd
 * with two, back to back, and their ratios (etcd ÷ SQLite, two replicas ÷ one). On a shared machine
 * only figures taken minutes apart compare; with `--runs=N` each round gives its own ratios and the
 * summary their medians (every other round in reverse order). Each row also gives every process's CPU per
 * CSR at e2e's fixed rate (100/s by default, `--rate`), which one replica and two both sustain on two
 * cores: there the second replica's added cost per CSR is measured at the same work per second, without
 * the closed loop's batching, which falls with its throughput.
 * Run: `node dist/bench/run.js e2e-etcd [--runs=3]`.
 */
import { type CpuMsPerCsr, formatQueues, runE2eBench, type E2eBenchResult, type E2eParams, type E2eRunOptions } from './e2e.js';
import { formatTable, round, type Machine, machine } from './lib/report.js';

interface Config {
  label: 'sqlite' | 'etcd' | 'etcdX2';
  storage: E2eParams['storage'];
  replicas: number;
}

const CONFIGS: Config[] = [
  { label: 'sqlite', storage: 'sqlite', replicas: 1 },
  { label: 'etcd', storage: 'etcd', replicas: 1 },
  { label: 'etcdX2', storage: 'etcd', replicas: 2 },
];

export interface EtcdRatioRow {
  csrsPerSec: number;
  p99Ms: number;
  errors: number;
  cpuMsPerCsr: CpuMsPerCsr;
  /**
   * Cores the closed loop kept busy: CSRs/s times every process's CPU per CSR. Near the host's usable
   * cores the loop is CPU-bound and the stores' throughputs go as their total CPU per CSR; well below,
   * something waits (a queue's workers, etcd's commits).
   */
  coresBusy: number;
  /** At the fixed rate: CSRs/s issued (the offered rate when the setup keeps up) and each process's CPU per CSR. */
  fixedRate: { csrsPerSec: number; cpuMsPerCsr: CpuMsPerCsr };
  /** On etcd, per CSR in the closed loop: the store's calls by operation, and what etcd received by gRPC method. */
  etcdRequestsPerCsr?: Record<string, number>;
  etcdRpcsPerCsr?: Record<string, number>;
  /** In the closed loop, each controller queue's mean wait for a worker and work time, ms (E2eBenchResult). */
  controllerQueueMs: E2eBenchResult['controllerQueueMs'];
}

export interface EtcdRatioResult extends Machine {
  name: 'e2e-etcd';
  sqlite: EtcdRatioRow;
  etcd: EtcdRatioRow;
  etcdX2: EtcdRatioRow;
  /** Issue 26's targets: etcd ÷ SQLite ≥ 0.7, two replicas ÷ one ≥ 1. */
  ratios: { etcdToSqlite: number; twoReplicasToOne: number };
  /** What the second replica adds per CSR at the fixed rate, by process (two replicas' CPU per CSR minus one's) and in all. */
  secondReplicaMsPerCsr: { apiserver: number; controller: number; clients: number; etcd: number; total: number };
}

/** Two replicas' CPU per CSR minus one's, by process (a process missing from a row counts 0), and the sum. */
export function secondReplicaCost(one: CpuMsPerCsr, two: CpuMsPerCsr): EtcdRatioResult['secondReplicaMsPerCsr'] {
  const d = (k: 'apiserver' | 'controller' | 'clients' | 'etcd'): number => round((two[k] ?? 0) - (one[k] ?? 0));
  const parts = { apiserver: d('apiserver'), controller: d('controller'), clients: d('clients'), etcd: d('etcd') };
  return { ...parts, total: round(parts.apiserver + parts.controller + parts.clients + parts.etcd) };
}

/** CSRs/s times the CPU ms per CSR of every process (etcd's when it runs), in cores. */
export function coresBusy(csrsPerSec: number, c: CpuMsPerCsr): number {
  return round((csrsPerSec * (c.apiserver + c.controller + c.clients + (c.etcd ?? 0))) / 1000, 2);
}

function row(r: E2eBenchResult): EtcdRatioRow {
  return {
    csrsPerSec: r.sustained.csrsPerSec,
    p99Ms: r.sustained.latencyMs.p99,
    errors: r.sustained.errors,
    cpuMsPerCsr: r.cpuMsPerCsr,
    coresBusy: coresBusy(r.sustained.csrsPerSec, r.cpuMsPerCsr),
    fixedRate: { csrsPerSec: r.fixedRate.csrsPerSec, cpuMsPerCsr: r.fixedRate.cpuMsPerCsr },
    controllerQueueMs: r.controllerQueueMs,
    ...(r.etcdRequestsPerCsr ? { etcdRequestsPerCsr: r.etcdRequestsPerCsr } : {}),
    ...(r.etcdRpcsPerCsr ? { etcdRpcsPerCsr: r.etcdRpcsPerCsr } : {}),
  };
}

/** `{ Txn: 3, Range: 0.01 }` as `Txn 3, Range 0.01`. */
const counts = (c: Record<string, number> | undefined): string => (c ? Object.entries(c).map(([k, n]) => `${k} ${n}`).join(', ') : '-');

const LABELS: Record<Config['label'], string> = { sqlite: 'SQLite', etcd: 'etcd', etcdX2: 'etcd x2' };

/** Rounds run so far in this process: every other round runs the three in reverse, so a host getting busier or quieter favours none. */
let rounds = 0;

export async function runEtcdRatioBench(params: Partial<E2eParams> = {}, opts: E2eRunOptions = {}): Promise<EtcdRatioResult> {
  const rows: Partial<Record<Config['label'], EtcdRatioRow>> = {};
  for (const c of rounds++ % 2 === 0 ? CONFIGS : [...CONFIGS].reverse()) {
    rows[c.label] = row(await runE2eBench({ ...params, storage: c.storage, replicas: c.replicas }, opts));
  }
  const { sqlite, etcd, etcdX2 } = rows as Record<Config['label'], EtcdRatioRow>;
  return {
    name: 'e2e-etcd',
    sqlite,
    etcd,
    etcdX2,
    ratios: { etcdToSqlite: round(etcd.csrsPerSec / Math.max(1, sqlite.csrsPerSec)), twoReplicasToOne: round(etcdX2.csrsPerSec / Math.max(1, etcd.csrsPerSec)) },
    secondReplicaMsPerCsr: secondReplicaCost(etcd.fixedRate.cpuMsPerCsr, etcdX2.fixedRate.cpuMsPerCsr),
    ...machine(),
  };
}

export function formatEtcdRatioTable(r: EtcdRatioResult): string {
  const cpu = (c: EtcdRatioRow['cpuMsPerCsr']): string => `${c.apiserver}${c.replicas ? ` (${c.replicas.join(' + ')})` : ''} / ${c.controller} / ${c.clients} / ${c.etcd ?? '-'}`;
  const line = (label: string, x: EtcdRatioRow): string[] => [label, String(x.csrsPerSec), String(x.p99Ms), String(x.errors), String(x.coresBusy), cpu(x.cpuMsPerCsr), `${x.fixedRate.csrsPerSec}: ${cpu(x.fixedRate.cpuMsPerCsr)}`];
  return [
    'e2e-etcd: closed loop x64, the same run on SQLite, etcd and etcd with two API servers; then each at one fixed rate',
    formatTable(
      ['store', 'CSRs/s', 'p99 ms', 'errors', 'cores busy', 'CPU ms per CSR: apiserver / controller / clients / etcd', 'fixed rate CSRs/s: CPU ms per CSR, as before'],
      (['sqlite', 'etcd', 'etcdX2'] as const).map((k) => line(LABELS[k], r[k])),
    ),
    `etcd ÷ SQLite ${r.ratios.etcdToSqlite} (goal 0.7); two replicas ÷ one ${r.ratios.twoReplicasToOne} (goal 1)`,
    `the second replica adds per CSR at the fixed rate: ${r.secondReplicaMsPerCsr.total} ms (apiservers ${r.secondReplicaMsPerCsr.apiserver}, controller ${r.secondReplicaMsPerCsr.controller}, clients ${r.secondReplicaMsPerCsr.clients}, etcd ${r.secondReplicaMsPerCsr.etcd})`,
    ...(['sqlite', 'etcd', 'etcdX2'] as const).map((k) => `${LABELS[k]} controller queues, ms waited / worked: ${formatQueues(r[k].controllerQueueMs)}`),
    ...(['etcd', 'etcdX2'] as const).map((k) => `${LABELS[k]} calls per CSR: store ${counts(r[k].etcdRequestsPerCsr)}; etcd received ${counts(r[k].etcdRpcsPerCsr)}`),
  ].join('\n');
}
