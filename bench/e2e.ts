/**
 * End to end: `kube-identity apiserver` (SQLite) and `kube-identity controller` as separate
 * processes; concurrent clients authenticated with bootstrap tokens (system:bootstrap:ID in
 * system:bootstrappers, as kubelets join) create kubelet client CSRs, and each waits until the
 * certificate appears on the CSR. Two modes: closed loop (sustained CSRs/s) and a fixed offered rate
 * (latency under load). Also API requests per CSR (controller's rest_client_requests_total plus the
 * clients' creates; `csr` leaves out the Event writes, which the broadcaster amortises over many CSRs,
 * `byMethod` shows that no read precedes a write), CPU ms per CSR of each process, and both
 * processes' peak RSS. With `storage: 'etcd'` the bench starts a one-member etcd and `replicas`
 * API servers on it (one data directory): clients spread their creates over the replicas, the
 * controller talks to the first and the issuance watch to the last, so a CSR crosses replicas.
 * Run: `node dist/bench/e2e.js` after `npm run build`, or call runE2eBench().
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CREDENTIAL_FILES } from '../src/apiserver/server/credentials.js';
import { startBareServer } from './api.js';
import { startApiServerProcess, type ApiServerProcess } from './lib/apiserver-process.js';
import { waitUntil } from './lib/child.js';
import { metricSum, startControllerProcess, type ControllerProcess } from './lib/controller-process.js';
import { HttpClient, type StreamHandle } from './lib/http-client.js';
import { CSR_PATH, createBootstrapToken, kubeletCsrObject, kubeletCsrPems } from './lib/kubelet-csr.js';
import { startEtcd, type EtcdCluster } from './lib/etcd-cluster.js';
import { closedLoop, openLoop, type LoadResult } from './lib/load.js';
import { formatTable, isMain, machine, mb, printResult, round, type Machine } from './lib/report.js';
import { parseBenchArgs } from './lib/cli.js';
import { formatLatency } from './lib/stats.js';

export interface E2eParams {
  /** Concurrent bootstrap clients in the closed loop. */
  concurrency: number;
  /** Closed loop: stop after this long... */
  durationMs: number;
  /** ...or this many CSRs. */
  maxCsrs: number;
  /** How long the bare server's creates are measured (at most durationMs): the ratio's denominator. */
  bareMs: number;
  /** Fixed-rate mode: CSRs started per second, and for how long. */
  fixedRate: number;
  fixedRateMs: number;
  /** CSRs issued before measuring (JIT and caches warm up). */
  warmup: number;
  /** Bootstrap tokens the clients share. */
  tokens: number;
  /** Distinct CSRs (keys) the clients cycle through. */
  distinctRequests: number;
  /** The API server's store: SQLite (the product's default), memory (to see what durability costs) or etcd. */
  storage: 'sqlite' | 'memory' | 'etcd';
  /** API server processes (more than one only on etcd). */
  replicas: number;
  /** The replica the issuance watch goes to: the last (most CSRs cross replicas) or the first (the controller's). */
  issuanceWatch: 'last' | 'first';
}

export interface E2eMode {
  issued: number;
  errors: number;
  firstError?: string;
  csrsPerSec: number;
  /** From sending the create to seeing the certificate (fixed rate: from the scheduled start). */
  latencyMs: LoadResult['latencyMs'];
}

/** CPU time (user + system) per CSR by process: see `E2eBenchResult.cpuMsPerCsr`. */
export interface CpuMsPerCsr {
  apiserver: number;
  controller: number;
  clients: number;
  etcd?: number;
  replicas?: number[];
}

export interface E2eBenchResult extends Machine {
  name: 'e2e';
  params: E2eParams;
  sustained: E2eMode;
  /**
   * `cpuMsPerCsr`: as the sustained run's, at the fixed rate: every build does the same work per
   * second there, so on a loaded host this compares builds better than the closed loop, whose CPU
   * per CSR falls as its throughput rises (fewer events and replies share each wake-up).
   */
  fixedRate: E2eMode & { offeredPerSec: number; cpuMsPerCsr: CpuMsPerCsr };
  /** Creates/s of the same CSR bodies on the bare server in this run. */
  bareCreatesPerSec: number;
  /** sustained CSRs/s ÷ (bare creates/s ÷ 4): issue 29's ratio (goal 0.5), comparable across machines. */
  csrsToQuarterBareCreates: number;
  /**
   * API requests per CSR in the sustained run: `total` is every request the controller made plus the
   * client's create; `csr` the same without Event writes (create, SubjectAccessReview, /approval,
   * /status: 4 when nothing is retried); `events` the Event writes; `byMethod` the controller's own.
   */
  apiRequestsPerCsr: { total: number; csr: number; events: number; controller: number; byMethod: Record<string, number> };
  /** Rate-limited requeues (conflicts, errors) per CSR in the sustained run: each waits on the queue's backoff. */
  controllerRetriesPerCsr: number;
  /**
   * Each controller work queue in the sustained run: mean ms an item waited for a worker and mean ms a
   * worker spent on it (workqueue_queue_duration_seconds, workqueue_work_duration_seconds). A queue
   * whose wait far exceeds its work has too few workers for the latency of its API calls.
   */
  controllerQueueMs: Record<string, { wait: number; work: number }>;
  /** `apiserver` adds up the replicas (etcd's own memory and CPU are not counted). */
  peakRssMb: { apiserver: number; controller: number };
  /**
   * CPU time (user + system) each process spent per CSR in the sustained run; `clients` is this process
   * (the load generator), `etcd` the bench's etcd (on etcd), `replicas` each API server's share of `apiserver` (several replicas).
   */
  cpuMsPerCsr: CpuMsPerCsr;
  /** On etcd: the API servers' calls to etcd per CSR in the sustained run (etcd_requests_total), by operation. */
  etcdRequestsPerCsr?: Record<string, number>;
  /**
   * On etcd: what etcd itself received per CSR in the sustained run, by gRPC method (its
   * grpc_server_msg_received_total: every unary call, every message on a Watch stream), calls the
   * store's metrics do not see (background revision reads, watch requests) included; `WatchResponses`
   * is what etcd sent on the Watch streams, `WalFsyncs` its WAL syncs (one per batch of proposals raft
   * persists together: the writes' share of etcd's CPU that batching moves).
   */
  etcdRpcsPerCsr?: Record<string, number>;
}

export const E2E_DEFAULTS: E2eParams = { concurrency: 64, durationMs: 20_000, maxCsrs: 100_000, bareMs: 5000, fixedRate: 100, fixedRateMs: 10_000, warmup: 100, tokens: 4, distinctRequests: 256, storage: 'sqlite', replicas: 1, issuanceWatch: 'last' };

const ISSUE_TIMEOUT_MS = 60_000;

/** One admin watch over all CSRs resolving a waiter per name once its certificate is set. */
class IssuanceTracker {
  private readonly waiters = new Map<string, { resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private handle: StreamHandle | undefined;

  async start(admin: HttpClient): Promise<void> {
    const rv = (await admin.json<{ metadata: { resourceVersion: string } }>('GET', `${CSR_PATH}?limit=1`)).metadata.resourceVersion;
    // Only an issued, denied or failed CSR settles a waiter: other events are not parsed.
    const settles = (line: string): boolean => line.includes('"certificate":"') || line.includes('"Denied"') || line.includes('"Failed"');
    this.handle = await admin.stream(`${CSR_PATH}?watch=1&resourceVersion=${rv}`, (ev) => this.onEvent(ev), settles);
  }

  /** Call before creating the CSR: the event can arrive before the create's response. */
  wait(name: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.settle(name, new Error(`CSR ${name} not issued within ${ISSUE_TIMEOUT_MS} ms`)), ISSUE_TIMEOUT_MS);
      this.waiters.set(name, { resolve, reject, timer });
    });
  }

  settle(name: string, err?: Error): void {
    const w = this.waiters.get(name);
    if (!w) return;
    this.waiters.delete(name);
    clearTimeout(w.timer);
    if (err) w.reject(err);
    else w.resolve();
  }

  stop(): void {
    this.handle?.close();
    for (const name of [...this.waiters.keys()]) this.settle(name, new Error('benchmark stopped'));
  }

  private onEvent(ev: unknown): void {
    const { type, object } = ev as { type?: string; object?: { metadata?: { name?: string }; status?: { certificate?: string; conditions?: { type: string; message?: string }[] } } };
    const name = object?.metadata?.name;
    if (!name || (type !== 'ADDED' && type !== 'MODIFIED')) return;
    if (object.status?.certificate) return this.settle(name);
    const bad = object.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (bad) this.settle(name, new Error(`CSR ${name} ${bad.type}: ${bad.message ?? ''}`));
  }
}

interface EtcdCounts {
  /** etcd_requests_total of every replica, added up by operation. */
  store: Record<string, number>;
  /** etcd's own grpc_server_msg_received_total, added up over its members, by method. */
  server: Record<string, number>;
}

/** On etcd, what the replicas say they asked and what etcd says it received. */
async function etcdRequests(servers: ApiServerProcess[], etcd: EtcdCluster | undefined): Promise<EtcdCounts | undefined> {
  if (!etcd) return undefined;
  const out: EtcdCounts = { store: {}, server: {} };
  const add = (to: Record<string, number>, key: string, n: string): void => void (to[key] = (to[key] ?? 0) + Number(n));
  for (const s of servers) {
    const client = new HttpClient(s.admin, 1);
    const text = await client.request('GET', '/metrics').then((r) => r.body).finally(() => client.close());
    for (const m of text.matchAll(/^etcd_requests_total\{operation="(\w+)",[^}]*\} (\d+)$/gm)) add(out.store, m[1]!, m[2]!);
  }
  for (const endpoint of etcd.endpoints) {
    const text = await (await fetch(`${endpoint}/metrics`)).text();
    for (const m of text.matchAll(/^grpc_server_msg_received_total\{[^}]*grpc_method="(\w+)"[^}]*\} (\d+)$/gm)) add(out.server, m[1]!, m[2]!);
    // A Watch stream's responses (events, progress) are what etcd sends the replicas unasked.
    for (const m of text.matchAll(/^grpc_server_msg_sent_total\{[^}]*grpc_method="Watch"[^}]*\} (\d+)$/gm)) add(out.server, 'WatchResponses', m[1]!);
    for (const m of text.matchAll(/^etcd_disk_wal_fsync_duration_seconds_count (\d+)$/gm)) add(out.server, 'WalFsyncs', m[1]!);
  }
  return out;
}

function etcdRequestsPerCsr(before: EtcdCounts | undefined, after: EtcdCounts | undefined, perCsr: (x: number) => number): Pick<E2eBenchResult, 'etcdRequestsPerCsr' | 'etcdRpcsPerCsr'> {
  if (!before || !after) return {};
  const per = (b: Record<string, number>, a: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(a).flatMap(([k, n]) => (n === (b[k] ?? 0) ? [] : [[k, perCsr(n - (b[k] ?? 0))]])));
  return { etcdRequestsPerCsr: per(before.store, after.store), etcdRpcsPerCsr: per(before.server, after.server) };
}

function cpuNow(servers: ApiServerProcess[], ctl: ControllerProcess, etcd: EtcdCluster | undefined): Required<CpuMsPerCsr> {
  const self = process.cpuUsage();
  const replicas = servers.map((s) => s.proc.cpuMs());
  return { apiserver: replicas.reduce((a, b) => a + b, 0), controller: ctl.proc.cpuMs(), clients: (self.user + self.system) / 1000, etcd: etcd?.cpuMs() ?? 0, replicas };
}

/** Each process's CPU between two `cpuNow` readings, per CSR (etcd only on etcd, `replicas` only with several). */
function cpuPerCsr(before: Required<CpuMsPerCsr>, after: Required<CpuMsPerCsr>, perCsr: (x: number) => number, onEtcd: boolean): CpuMsPerCsr {
  return {
    apiserver: perCsr(after.apiserver - before.apiserver),
    controller: perCsr(after.controller - before.controller),
    clients: perCsr(after.clients - before.clients),
    ...(onEtcd ? { etcd: perCsr(after.etcd - before.etcd) } : {}),
    ...(after.replicas.length > 1 ? { replicas: after.replicas.map((c, i) => perCsr(c - (before.replicas[i] ?? 0))) } : {}),
  };
}

/** The API server process(es), and what stops them (and the bench's etcd). */
async function startServers(p: E2eParams, execArgv: string[] | undefined, pprof: boolean): Promise<{ servers: ApiServerProcess[]; etcd: EtcdCluster | undefined; close: () => Promise<void> }> {
  const servers: ApiServerProcess[] = [];
  const etcd = p.storage === 'etcd' ? await startEtcd({ pprof }) : undefined;
  const close = async (): Promise<void> => {
    for (const s of servers.reverse()) await s.close();
    await etcd?.stop();
  };
  try {
    for (let i = 0; i < (etcd ? p.replicas : 1); i++) {
      servers.push(await startApiServerProcess({ execArgv, storage: p.storage, etcdServers: etcd?.endpoints, dataDir: servers[0]?.dataDir }));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { servers, etcd, close };
}

/**
 * The controller's metrics once it has counted `issued` issuances: a client sees its certificate on
 * the watch before the controller has the reply to its /status write, which would otherwise fall
 * on the wrong side of a snapshot.
 */
function issuedMetrics(ctl: ControllerProcess, issued: number): Promise<string> {
  return waitUntil('the controller to count its issuances', async () => {
    const text = await ctl.metrics();
    return metricSum(text, 'kube_identity_csr_issuances_total') >= issued ? text : undefined;
  }, 30_000, ctl.proc);
}

/** The controller's metrics once the warm-up is issued and its Events written: the measured CSRs pay only for what is left of them. */
function settledAfterWarmup(ctl: ControllerProcess, issued: number): Promise<string> {
  return waitUntil('the warm-up to settle', async () => {
    const text = await issuedMetrics(ctl, issued);
    return metricSum(text, 'kube_identity_event_queue_depth') === 0 ? text : undefined;
  }, 30_000, ctl.proc);
}

/** Requests between two scrapes of the controller's metrics, per CSR, with the clients' `creates`. */
function requestsPerCsr(m0: string, m1: string, creates: number, perCsr: (x: number) => number): E2eBenchResult['apiRequestsPerCsr'] {
  const delta = (name: string, filter = ''): number => metricSum(m1, name, filter) - metricSum(m0, name, filter);
  const controller = delta('rest_client_requests_total');
  const events = delta('kube_identity_event_writes_total');
  return {
    total: perCsr(controller + creates),
    csr: perCsr(controller - events + creates),
    events: perCsr(events),
    controller: perCsr(controller),
    byMethod: Object.fromEntries(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => [m, perCsr(delta('rest_client_requests_total', `method="${m}"`))])),
  };
}

/** Mean queue wait and work time of each controller work queue between two scrapes. */
function queueMs(m0: string, m1: string): E2eBenchResult['controllerQueueMs'] {
  const mean = (metric: string, name: string): number => {
    const delta = (suffix: string): number => metricSum(m1, `${metric}_${suffix}`, `name="${name}"`) - metricSum(m0, `${metric}_${suffix}`, `name="${name}"`);
    return round((1000 * delta('sum')) / Math.max(1, delta('count')), 2);
  };
  const names = new Set([...m1.matchAll(/^workqueue_work_duration_seconds_count\{name="([^"]+)"/gm)].map((m) => m[1]!));
  return Object.fromEntries([...names].map((n) => [n, { wait: mean('workqueue_queue_duration_seconds', n), work: mean('workqueue_work_duration_seconds', n) }]));
}

function mode(r: LoadResult): E2eMode {
  return { issued: r.ok, errors: r.errors, ...(r.firstError ? { firstError: r.firstError } : {}), csrsPerSec: r.perSec, latencyMs: r.latencyMs };
}

/**
 * Creates/s of the same CSR bodies on the bare server (bench/lib/bare-server.ts), same client and
 * concurrency, measured in this run: the ceiling issue 29's ratio divides by (a CSR costs about four
 * requests: the create, the approval, the status write and the watch event).
 */
async function bareCreatesPerSec(server: ApiServerProcess, p: E2eParams, pems: string[]): Promise<number> {
  const bare = await startBareServer(server.dataDir);
  const client = new HttpClient({ url: bare.url, caPem: server.admin.caPem }, p.concurrency);
  try {
    const op = (prefix: string) => (i: number): Promise<void> => client.json('POST', '/objects', kubeletCsrObject(`${prefix}-${i}`, pems[i % pems.length] as string)).then(() => undefined);
    // Unmeasured first: the pool's TLS handshakes and the JIT, as the API server had its warm-up.
    await closedLoop({ concurrency: p.concurrency, maxOps: Number.MAX_SAFE_INTEGER, maxMs: 1000, op: op('warm') });
    return (await closedLoop({ concurrency: p.concurrency, maxOps: Number.MAX_SAFE_INTEGER, maxMs: Math.min(p.bareMs, p.durationMs), op: op('bare') })).perSec;
  } finally {
    client.close();
    await bare.proc.stop();
  }
}

/**
 * `profileDir`: on etcd, etcd's own CPU profile of the closed loop is written there too, as
 * etcd-x<replicas>-<time>.pb.gz (`go tool pprof -top FILE`).
 */
export interface E2eRunOptions {
  execArgv?: string[];
  profileDir?: string;
}

export async function runE2eBench(params: Partial<E2eParams> = {}, opts: E2eRunOptions = {}): Promise<E2eBenchResult> {
  const p: E2eParams = { ...E2E_DEFAULTS, ...params };
  let stopServers: (() => Promise<void>) | undefined;
  let ctl: ControllerProcess | undefined;
  const tracker = new IssuanceTracker();
  const clients: HttpClient[] = [];
  try {
    const started = await startServers(p, opts.execArgv, opts.profileDir !== undefined);
    stopServers = started.close;
    const servers = started.servers;
    const server = servers[0] as ApiServerProcess;
    const admin = new HttpClient(server.admin, Infinity);
    const watcher = new HttpClient((p.issuanceWatch === 'first' ? server : (servers.at(-1) as ApiServerProcess)).admin, Infinity);
    clients.push(admin, watcher);
    const tokens: string[] = [];
    for (let i = 0; i < p.tokens; i++) tokens.push(await createBootstrapToken(admin));
    // Each token's clients go to one replica (tokens outnumber replicas), so creates spread evenly.
    const bootstrap = tokens.map((t, i) => new HttpClient({ ...(servers[i % servers.length] as ApiServerProcess).admin, token: t }, p.concurrency));
    clients.push(...bootstrap);
    ctl = await startControllerProcess({
      kubeconfig: server.kubeconfigPath,
      caCertFile: path.join(server.dataDir, CREDENTIAL_FILES.caPem),
      caKeyFile: path.join(server.dataDir, CREDENTIAL_FILES.caKeyPem),
      execArgv: opts.execArgv,
    });
    const pems = await kubeletCsrPems(p.distinctRequests);
    await tracker.start(watcher);
    const op = (prefix: string) => async (i: number): Promise<void> => {
      const name = `${prefix}-${i}`;
      const issued = tracker.wait(name);
      try {
        await (bootstrap[i % bootstrap.length] as HttpClient).json('POST', CSR_PATH, kubeletCsrObject(name, pems[i % pems.length] as string));
      } catch (err) {
        tracker.settle(name, err as Error);
      }
      await issued;
    };

    const warm = await closedLoop({ concurrency: p.concurrency, maxOps: p.warmup, maxMs: 60_000, op: op('warmup') });
    if (warm.ok === 0 && p.warmup > 0) throw new Error(`no CSR was issued during warm-up: ${warm.firstError}`);
    const m0 = await settledAfterWarmup(ctl, warm.ok);
    const etcd0 = await etcdRequests(servers, started.etcd);
    const cpu0 = cpuNow(servers, ctl, started.etcd);
    const [sustained] = await Promise.all([
      closedLoop({ concurrency: p.concurrency, maxOps: p.maxCsrs, maxMs: p.durationMs, op: op('sustained') }),
      // etcd's own profile of the loop, but for its last seconds (the loop ends by time, or sooner by count).
      opts.profileDir && started.etcd
        ? started.etcd.members[0]!.cpuProfile(Math.max(1, Math.floor(p.durationMs / 1000) - 4)).then((pb) => writeFileSync(path.join(opts.profileDir!, `etcd-x${p.replicas}-${Date.now()}.pb.gz`), pb))
        : undefined,
    ]);
    const cpu1 = cpuNow(servers, ctl, started.etcd);
    const etcd1 = await etcdRequests(servers, started.etcd);
    const m1 = await issuedMetrics(ctl, warm.ok + sustained.ok);
    const fixed = await openLoop({ ratePerSec: p.fixedRate, durationMs: p.fixedRateMs, drainMs: 30_000, op: op('fixed') });
    const cpu2 = cpuNow(servers, ctl, started.etcd);
    const perFixedCsr = (x: number): number => round(x / Math.max(1, fixed.ok), 2);
    const bareCreates = await bareCreatesPerSec(server, p, pems);
    const perCsr = (x: number): number => round(x / Math.max(1, sustained.ok), 2);
    return {
      name: 'e2e',
      params: p,
      sustained: mode(sustained),
      fixedRate: {
        ...mode(fixed),
        offeredPerSec: p.fixedRate,
        cpuMsPerCsr: cpuPerCsr(cpu1, cpu2, perFixedCsr, started.etcd !== undefined),
      },
      bareCreatesPerSec: bareCreates,
      csrsToQuarterBareCreates: round(sustained.perSec / Math.max(1, bareCreates / 4)),
      apiRequestsPerCsr: requestsPerCsr(m0, m1, sustained.ok + sustained.errors, perCsr),
      controllerRetriesPerCsr: perCsr(metricSum(m1, 'workqueue_retries_total') - metricSum(m0, 'workqueue_retries_total')),
      controllerQueueMs: queueMs(m0, m1),
      peakRssMb: { apiserver: mb(servers.reduce((sum, s) => sum + s.proc.memory().peakRss, 0)), controller: mb(ctl.proc.memory().peakRss) },
      cpuMsPerCsr: cpuPerCsr(cpu0, cpu1, perCsr, started.etcd !== undefined),
      ...etcdRequestsPerCsr(etcd0, etcd1, perCsr),
      ...machine(),
    };
  } finally {
    tracker.stop();
    for (const c of clients) c.close();
    await ctl?.close();
    await stopServers?.();
  }
}

/** `{ csrapproving: { wait: 12, work: 3 } }` as `csrapproving 12 / 3`. */
export function formatQueues(q: E2eBenchResult['controllerQueueMs']): string {
  return Object.entries(q).map(([name, { wait, work }]) => `${name} ${wait} / ${work}`).join(', ');
}

export function formatE2eTable(r: E2eBenchResult): string {
  const row = (label: string, m: E2eMode): string[] => [label, String(m.issued), String(m.errors), String(m.csrsPerSec), formatLatency(m.latencyMs)];
  return [
    `e2e: apiserver (${r.params.storage}${r.params.replicas > 1 ? ` x${r.params.replicas}` : ''}) + controller processes; ${r.params.concurrency} bootstrap clients for ${r.params.durationMs / 1000} s, then ${r.params.fixedRate} CSRs/s for ${r.params.fixedRateMs / 1000} s; ` +
      `API requests per CSR ${r.apiRequestsPerCsr.total} (without Events ${r.apiRequestsPerCsr.csr}, Events ${r.apiRequestsPerCsr.events}, controller ${r.apiRequestsPerCsr.controller}, retries ${r.controllerRetriesPerCsr}); peak RSS apiserver ${r.peakRssMb.apiserver} MB, controller ${r.peakRssMb.controller} MB; ` +
      `CPU ms per CSR apiserver ${r.cpuMsPerCsr.apiserver}, controller ${r.cpuMsPerCsr.controller}, clients ${r.cpuMsPerCsr.clients}${r.cpuMsPerCsr.replicas ? ` (replicas ${r.cpuMsPerCsr.replicas.join(' + ')})` : ''}${r.cpuMsPerCsr.etcd === undefined ? '' : `, etcd ${r.cpuMsPerCsr.etcd}`}; ${r.cores} cores; node ${r.node}`,
    formatTable(['mode', 'issued', 'errors', 'CSRs/s', 'create->issued p50/p90/p99/max ms'], [row(`closed loop x${r.params.concurrency}`, r.sustained), row(`fixed ${r.fixedRate.offeredPerSec}/s`, r.fixedRate)]),
    `ratio to the bare server of this run: CSRs/s ÷ (bare creates/s ${r.bareCreatesPerSec} ÷ 4) = ${r.csrsToQuarterBareCreates.toFixed(3)} (goal 0.5)`,
    `controller queues in the closed loop, ms an item waited / a worker spent: ${formatQueues(r.controllerQueueMs)}`,
    ...(r.etcdRpcsPerCsr ? [`etcd calls per CSR: store ${JSON.stringify(r.etcdRequestsPerCsr)}; etcd received ${JSON.stringify(r.etcdRpcsPerCsr)}`] : []),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  parseBenchArgs(process.argv.slice(2), { command: 'bench/e2e', usage: 'usage: node dist/bench/e2e.js\nThe end-to-end benchmark with its defaults; its flags: npm run bench -- e2e --help', options: {} });
  const result = await runE2eBench();
  printResult(result, formatE2eTable(result));
}
