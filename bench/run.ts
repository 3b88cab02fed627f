/**
 * `npm run bench`: runs pki, api, cache and e2e in turn (or only the one named in argv[2]), each
 * printing its JSON object and table. A benchmark that fails is reported and the others still run;
 * the exit code is then 1. Sized to finish in under 5 minutes on a 2-core machine.
 * `--cpu-prof-dir=DIR` (node refuses --cpu-prof in NODE_OPTIONS) makes the API server and controller
 * children of `api` and `e2e` write CPU profiles there. `--storage=memory` runs `e2e` on the
 * memory store instead of SQLite, to show what durable storage costs; `--storage=etcd` on an etcd
 * the bench starts (`etcd` on PATH), with `--replicas=N` API servers on it. `--runs=N` runs each
 * benchmark N times and prints one JSON object with every run and the median and range of each
 * figure (bench/lib/runs.ts), then that summary as a table. `--rate=R` sets e2e's fixed rate (CSRs/s);
 * `--issuance-watch=first` puts e2e's issuance watch on the controller's replica instead of the last.
 * `--audit-policy=FILE` runs `api`'s server with that audit policy, logging to a file in a temporary
 * directory (what auditing costs, against the same bare server). `encryption` runs only when named: an API
 * server encrypting Secrets (`--provider=secretbox|aesgcm|aescbc`) beside one that does not, in the same
 * run (bench/encryption.ts). `e2e-etcd` runs only when named: e2e on
 * SQLite, on etcd and on two etcd replicas back to back, with issue 26's ratios (bench/e2e-etcd.ts). `soak` runs only when named: the etcd fault soak (bench/soak.ts) for `--duration=S` seconds (600 by
 * default, `--seed=N`); it fails when any check found a violation. `api-ab [--against=DIR]` runs only when named:
 * this build's API server and DIR's build side by side, clients alternating, with the ratio of their CPU per
 * request (bench/api-ab.ts): the A/B that a shared host's swings do not drown.
 * `fleet --nodes N[,N2...]` runs the fleet simulator (bench/fleet.ts) alone: it takes minutes per N, so
 * it is never part of the default run. `--help` (after a benchmark's name too) prints the usage and
 * runs nothing; a flag unknown, or not one of the named benchmark's, is an error (bench/lib/cli.ts).
 */
import 'reflect-metadata';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// Each benchmark's module is imported when it runs, so `--help` and a bad flag answer without loading
// the servers' code (seconds per start from source, as the CLI tests run it).
import type { E2eParams } from './e2e.js';
import type { EncryptionProvider } from './encryption.js';
import { parseBenchArgs } from './lib/cli.js';
import { printResult } from './lib/report.js';
import { formatRunsTable, summarizeRuns } from './lib/runs.js';

/** The flags each benchmark takes besides --runs; a flag given to a benchmark it does not apply to is an error. */
const E2E_FLAGS = ['cpu-prof-dir', 'storage', 'replicas', 'rate', 'issuance-watch'];
const FLAGS: Record<string, string[]> = {
  pki: [],
  api: ['cpu-prof-dir', 'audit-policy'],
  cache: [],
  e2e: E2E_FLAGS,
  'e2e-etcd': E2E_FLAGS,
  encryption: ['cpu-prof-dir', 'provider'],
  'api-ab': ['against', 'node-flags-a', 'node-flags-b'],
  soak: ['duration', 'seed'],
};
const USAGE = `usage: npm run bench -- [BENCHMARK] [flags]   (or node dist/bench/run.js [BENCHMARK] [flags])
Without BENCHMARK: pki, api, cache and e2e in turn. Only when named: e2e-etcd, encryption, api-ab, soak, fleet.
  --runs=N                 run each benchmark N times; one JSON with every run and each figure's median and range
  --cpu-prof-dir=DIR       (api, e2e, e2e-etcd, encryption) the servers and controller write CPU profiles there
                           (on etcd, etcd's own of the closed loop too: go tool pprof -top DIR/etcd-*.pb.gz)
  --audit-policy=FILE      (api) the server audits with that policy, to a log in a temporary directory
  --storage=sqlite|memory|etcd, --replicas=N, --rate=R, --issuance-watch=first
                           (e2e, e2e-etcd) store, API server replicas on etcd, fixed rate in CSRs/s, issuance watch on the first replica
  --provider=secretbox|aesgcm|aescbc   (encryption) the encryption provider
  --against=DIR            (api-ab) the other build, side by side with this one (without it: this build twice)
  --node-flags-a=FLAGS, --node-flags-b=FLAGS
                           (api-ab) node flags for A's or B's server only (e.g. --node-flags-b=--max-semi-space-size=16)
  --duration=S, --seed=N   (soak) how long the etcd fault soak runs (600 s by default), its random seed
fleet takes flags of its own: npm run bench -- fleet --help`;

const argv = process.argv.slice(2);
// fleet parses its own flags (bench/fleet-cli.ts), with its own --help.
if (argv[0] === 'fleet') {
  const { runFleetCli } = await import('./fleet-cli.js');
  await runFleetCli(argv.slice(1));
  process.exit(0);
}
const args = parseBenchArgs(argv, {
  command: 'bench',
  usage: USAGE,
  positionals: 1,
  options: Object.fromEntries(['runs', ...new Set(Object.values(FLAGS).flat())].map((name) => [name, { type: 'string' as const }])),
});
const only = args.positionals[0];
if (only !== undefined && !(only in FLAGS)) args.fail(`unknown benchmark ${only}; one of: ${[...Object.keys(FLAGS), 'fleet'].join(', ')}`);
const applicable = new Set(['runs', ...(only === undefined ? ['pki', 'api', 'cache', 'e2e'] : [only]).flatMap((b) => FLAGS[b] ?? [])]);
for (const name of args.given) if (!applicable.has(name)) args.fail(`--${name} does not apply to ${only ?? 'the default benchmarks'}`);

const profDir = args.string('cpu-prof-dir');
const childArgs = profDir ? { execArgv: ['--cpu-prof', '--cpu-prof-dir', profDir], profileDir: profDir } : {};
const storage = args.string('storage');
if (storage !== undefined && storage !== 'sqlite' && storage !== 'memory' && storage !== 'etcd') args.fail(`--storage takes sqlite, memory or etcd, got ${storage}`);
const issuanceWatch = args.string('issuance-watch');
if (issuanceWatch !== undefined && issuanceWatch !== 'first' && issuanceWatch !== 'last') args.fail(`--issuance-watch takes first or last, got ${issuanceWatch}`);
const provider = args.string('provider');
if (provider !== undefined) {
  const { ENCRYPTION_PROVIDERS } = await import('./encryption.js');
  if (!ENCRYPTION_PROVIDERS.includes(provider as EncryptionProvider)) args.fail(`--provider takes one of ${ENCRYPTION_PROVIDERS.join(', ')}, got ${provider}`);
}
const replicas = args.number('replicas', { min: 1, integer: true });
const rate = args.number('rate', { min: 1 });
const e2eParams: Partial<E2eParams> = {
  ...(storage === 'memory' || storage === 'etcd' ? { storage } : {}),
  ...(replicas !== undefined ? { replicas } : {}),
  ...(rate !== undefined ? { fixedRate: rate } : {}),
  ...(issuanceWatch === 'first' ? { issuanceWatch: 'first' as const } : {}),
};
const runs = args.number('runs', { min: 1, integer: true }) ?? 1;
const soakDuration = args.number('duration', { min: 1 }) ?? 600;
const soakSeed = args.number('seed', { integer: true }) ?? Date.now() % 100_000;

/** The audit flags of `--audit-policy=FILE`: the policy, and a log in a fresh temporary directory. */
function auditArgs(): string[] {
  const policy = args.string('audit-policy');
  if (policy === undefined) return [];
  return ['--audit-policy-file', path.resolve(policy), '--audit-log-path', path.join(mkdtempSync(path.join(os.tmpdir(), 'kube-identity-bench-audit-')), 'audit.log')];
}

/** One run: its result and the table for people. */
type Run = () => Promise<{ result: object; table: string }>;

const BENCHMARKS: Record<string, Run> = {
  pki: async () => {
    const { formatPkiTable, runPkiBench } = await import('./pki.js');
    const r = await runPkiBench();
    return { result: r, table: formatPkiTable(r) };
  },
  api: async () => {
    const { formatApiTable, runApiBench } = await import('./api.js');
    const r = await runApiBench({}, { ...childArgs, args: auditArgs() });
    return { result: r, table: formatApiTable(r) };
  },
  cache: async () => {
    const { formatCacheTable, runCacheBench } = await import('./cache.js');
    const r = await runCacheBench();
    return { result: r, table: formatCacheTable(r) };
  },
  e2e: async () => {
    const { formatE2eTable, runE2eBench } = await import('./e2e.js');
    const r = await runE2eBench(e2eParams, childArgs);
    return { result: r, table: formatE2eTable(r) };
  },
};

/** Benchmarks that run only when named. */
const ON_REQUEST: Record<string, Run> = {
  'e2e-etcd': async () => {
    const { formatEtcdRatioTable, runEtcdRatioBench } = await import('./e2e-etcd.js');
    const r = await runEtcdRatioBench(e2eParams, childArgs);
    return { result: r, table: formatEtcdRatioTable(r) };
  },
  encryption: async () => {
    const { formatEncryptionTable, runEncryptionBench } = await import('./encryption.js');
    const r = await runEncryptionBench(provider ? { provider: provider as EncryptionProvider } : {}, childArgs);
    return { result: r, table: formatEncryptionTable(r) };
  },
  'api-ab': async () => {
    const { abNodeFlags, formatApiAbTable, runApiAbBench } = await import('./api-ab.js');
    const r = await runApiAbBench({}, args.string('against'), abNodeFlags(args.string('node-flags-a'), args.string('node-flags-b')));
    return { result: r, table: formatApiAbTable(r) };
  },
  soak: async () => {
    const { formatSoakTable, runSoak } = await import('./soak.js');
    const r = await runSoak({ durationS: soakDuration, seed: soakSeed }, (line) => console.error(line));
    if (r.violations.length > 0 || r.replicaExits.length > 0) process.exitCode = 1;
    return { result: r, table: formatSoakTable(r) };
  },
};

/** One benchmark, or with --runs N, N of them (each table as it comes, then one JSON with them all). */
async function runBenchmark(name: string, run: Run): Promise<void> {
  if (runs === 1) {
    const { result, table } = await run();
    printResult(result, table);
    return;
  }
  const results: object[] = [];
  for (let i = 1; i <= runs; i++) {
    const { result, table } = await run();
    console.log(`-- run ${i} of ${runs}\n${table}`);
    results.push(result);
  }
  const summary = summarizeRuns(name, results);
  printResult(summary, formatRunsTable(summary));
}

let failed = false;
const start = performance.now();
for (const [name, run] of Object.entries(only !== undefined && only in ON_REQUEST ? ON_REQUEST : BENCHMARKS)) {
  if (only !== undefined && name !== only) continue;
  const t0 = performance.now();
  console.log(`\n== ${name}`);
  try {
    await runBenchmark(name, run);
  } catch (err) {
    failed = true;
    console.error(`benchmark ${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
  console.log(`(${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
console.log(`\nbenchmarks done in ${((performance.now() - start) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : (process.exitCode ?? 0));
