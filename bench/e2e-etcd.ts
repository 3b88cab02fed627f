/**
 * Issue 26's throughput figures in one run: `e2e` on SQLite, on etcd with one API server and on etcd
 * with two, back to back, and their ratios (etcd ÷ SQLite, two replicas ÷ one). On a shared machine
 * only figures taken minutes apart compare; with `--runs=N` each round gives its own ratios and the
 * summary their medians (every other round in reverse order). The fixed-rate phase is shortened: these
 * figures are about the closed loop.
 * Run: `node dist/bench/run.js e2e-etcd [--runs=3]`.
 */
import { runE2eBench, type E2eBenchResult, type E2eParams } from './e2e.js';
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
  cpuMsPerCsr: E2eBenchResult['cpuMsPerCsr'];
}

export interface EtcdRatioResult extends Machine {
  name: 'e2e-etcd';
  sqlite: EtcdRatioRow;
  etcd: EtcdRatioRow;
  etcdX2: EtcdRatioRow;
  /** Issue 26's targets: etcd ÷ SQLite ≥ 0.7, two replicas ÷ one ≥ 1. */
  ratios: { etcdToSqlite: number; twoReplicasToOne: number };
}

function row(r: E2eBenchResult): EtcdRatioRow {
  return { csrsPerSec: r.sustained.csrsPerSec, p99Ms: r.sustained.latencyMs.p99, errors: r.sustained.errors, cpuMsPerCsr: r.cpuMsPerCsr };
}

/** Rounds run so far in this process: every other round runs the three in reverse, so a host getting busier or quieter favours none. */
let rounds = 0;

export async function runEtcdRatioBench(params: Partial<E2eParams> = {}, opts: { execArgv?: string[] } = {}): Promise<EtcdRatioResult> {
  const rows: Partial<Record<Config['label'], EtcdRatioRow>> = {};
  for (const c of rounds++ % 2 === 0 ? CONFIGS : [...CONFIGS].reverse()) {
    rows[c.label] = row(await runE2eBench({ fixedRateMs: 3000, ...params, storage: c.storage, replicas: c.replicas }, opts));
  }
  const { sqlite, etcd, etcdX2 } = rows as Record<Config['label'], EtcdRatioRow>;
  return {
    name: 'e2e-etcd',
    sqlite,
    etcd,
    etcdX2,
    ratios: { etcdToSqlite: round(etcd.csrsPerSec / Math.max(1, sqlite.csrsPerSec)), twoReplicasToOne: round(etcdX2.csrsPerSec / Math.max(1, etcd.csrsPerSec)) },
    ...machine(),
  };
}

export function formatEtcdRatioTable(r: EtcdRatioResult): string {
  const cpu = (c: EtcdRatioRow['cpuMsPerCsr']): string => `${c.apiserver}${c.replicas ? ` (${c.replicas.join(' + ')})` : ''} / ${c.controller} / ${c.clients} / ${c.etcd ?? '-'}`;
  const line = (label: string, x: EtcdRatioRow): string[] => [label, String(x.csrsPerSec), String(x.p99Ms), String(x.errors), cpu(x.cpuMsPerCsr)];
  return [
    'e2e-etcd: closed loop x64, the same run on SQLite, etcd and etcd with two API servers',
    formatTable(['store', 'CSRs/s', 'p99 ms', 'errors', 'CPU ms per CSR: apiserver / controller / clients / etcd'], [line('SQLite', r.sqlite), line('etcd', r.etcd), line('etcd x2', r.etcdX2)]),
    `etcd ÷ SQLite ${r.ratios.etcdToSqlite} (goal 0.7); two replicas ÷ one ${r.ratios.twoReplicasToOne} (goal 1)`,
  ].join('\n');
}
