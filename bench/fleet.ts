/**
 * `bench fleet --nodes N`: N simulated kubelets (bench/lib/kubelet-sim.ts) against `kube-identity up`
 * in a child process (SQLite store; the real controller approves and issues), four scenarios:
 * - join storm: the N nodes start evenly within 10 s; it lasts until every node holds a client and a
 *   serving certificate (joinStormSeconds);
 * - steady state: two minutes of Lease renewals (every 10 s), status reports and open watches;
 * - rotation wave: every node's client rotation falls due within one minute (as certificates issued
 *   together with a short life would), each closing its connections and restarting its watches;
 * - server restart: `up` is stopped (SIGTERM) and started again on its data directory and port; it
 *   lasts until every node's two watches are open again, and no Lease may grow older than 40 s. Its
 *   latencies count requests sent once the new `up` answered (the others measure the downtime).
 * SLOs (SIG Scalability's, and no node NotReady): mutating p99 ≤ 1 s, single-object GET p99 ≤ 1 s,
 * LIST p99 ≤ 30 s, the oldest Lease < 40 s, every node joined and rotated, every watch back after the
 * restart, no failed request outside the restart (what a node's own rotation cut, which a kubelet sees and
 * retries too, is counted apart: closedByRotation). A latency is SIG Scalability's SLI, "from the moment
 * the apiserver gets the request": measured by the client from when the request could go out on a
 * ready connection, so the time a request spends queued at the server (in its event loop) counts, and
 * the wait for a new connection's TCP and TLS handshakes is reported apart (connectWaitMs); a connection
 * that fails or times out is an error. Its command line (`npm run bench -- fleet --help`) is bench/fleet-cli.ts.
 * The kubelets speak HTTP/2 when up negotiates it (one connection per credential, as client-go), or HTTP/1.1 when told.
 * The simulated kubelets run in `workers` processes (bench/lib/fleet-pool.ts; one per 250 nodes, at
 * most 8, by default), so no single event loop of the load generator is what is measured. They share the
 * machine with `up`: the worst worker's event-loop delay and the simulator's CPU are reported beside the figures.
 * With `upCpuProfDir`, `up` runs under `node --cpu-prof` (profile written there when it stops) and the run ends
 * after the steady state (its last seconds are the steady state's profile; `--steady-seconds 1` for the join's)
 * unless `stopAfter` says: with `stopAfter: 'restart'` the restarted `up` is profiled too, into a second file.
 * `node dist/bench/cpuprofile.js FILE` summarizes where up's main thread went.
 */
import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CREDENTIAL_FILES } from '../src/apiserver/server/credentials.js';
import { acceptQueueLength } from './lib/accept-queue.js';
import { bareConnectionCpuMs } from './lib/bare-connections.js';
import { freePort } from './lib/free-port.js';
import { HttpClient } from './lib/http-client.js';
import { createBootstrapToken } from './lib/kubelet-csr.js';
import { FleetPool, defaultWorkers, type NodeCounts } from './lib/fleet-pool.js';
import { cpuStallUs, listeningAgain, startUp } from './lib/fleet-up.js';
import { negotiatedProtocol, type Protocol } from './lib/fleet-transport.js';
import { formatTable, machine, mb, round, type Machine } from './lib/report.js';
import { summarize, type LatencySummary } from './lib/stats.js';

export interface FleetParams {
  nodes: number;
  joinSpreadMs: number;
  steadyMs: number;
  rotationSpreadMs: number;
  /** How long a scenario may take before it is reported as not reached. */
  scenarioTimeoutMs: number;
  /** Run the server-restart scenario (the smoke test leaves it out: it starts `up` twice). */
  restart: boolean;
  /** Run the rotation wave (`--no-rotation` leaves it out: the restart follows the steady state, for A/B runs of the restart). */
  rotation: boolean;
  /** Processes the simulated kubelets are spread over (node i in process i mod workers). */
  workers: number;
  /** Run `up` under `node --cpu-prof` writing into this directory (and stop after the steady state unless `stopAfter` says). */
  upCpuProfDir?: string;
  /** End the run after this scenario (A/B runs of the join and steady state need no rotation or restart). */
  stopAfter?: 'join' | 'steady' | 'rotation' | 'restart';
  /** Speak HTTP/1.1 even when the server offers h2 (the simulator before HTTP/2, for comparison). */
  http1: boolean;
}

const PHASES = ['join', 'steady', 'rotation', 'restart'] as const;
type Phase = (typeof PHASES)[number];

export interface PhaseResult {
  seconds: number;
  /** Whether the scenario's end condition was reached (every node joined / rotated / watching again). */
  reached: boolean;
  requests: number;
  mutatingMs: LatencySummary;
  getMs: LatencySummary;
  listMs: LatencySummary;
  leaseRenewMs: LatencySummary;
  /**
   * Of every kind, the requests that had waited for their connection (the first on each): what waits
   * between a handshake the client saw done and the server reading the connection (a TLS front's hand-over).
   */
  firstOnConnectionMs: LatencySummary;
  /** Requests' waits for a new connection (TCP and TLS handshakes), outside the latencies above. */
  connectWaitMs: LatencySummary;
  maxLeaseAgeSeconds: number;
  errors: number;
  firstError?: string;
  /** The errors by kind (an HTTP error by request and status, else its message without per-node parts): who failed how. */
  errorKinds: Record<string, number>;
  /**
   * Not errors, by kind: what the nodes' own rotations cut. As kubelet, a rotation closes every connection
   * at once; requests under way on them fail, and are retried (a Lease update then conflicts if the cut
   * one was written), as a real kubelet's would be. The server closing or resetting anything is an error.
   */
  closedByRotation: Record<string, number>;
  /** 429s the kubelets honoured; of those, answers to Lease renewals (node-high, which must never be starved); the longest Retry-After told. */
  throttled: number;
  leaseThrottled: number;
  retryAfterMaxSeconds: number;
  /**
   * Restart only: each node's first Lease renewal after up was stopped, in s from the stop: the
   * downtime plus what the reconnect storm adds (a Lease is then up to one renewal period older).
   */
  renewedAfterStopS?: LatencySummary;
  /** TLS connections the simulated kubelets opened in the phase. */
  connectionsOpened: number;
  /**
   * The most connections seen waiting in the kernel to be accepted on up's port (sampled every
   * second): where a connect wait is spent before any TLS, libuv accepting one per loop turn.
   */
  acceptQueueMax: number;
  /**
   * up's CPU over the phase, in % of one core; its main thread's alone (the API server's event loop and
   * native TLS work); its controller thread's alone; per node, in ms.
   */
  upCpuPercent: number;
  upMainThreadCpuPercent: number;
  upControllerThreadCpuPercent: number;
  upCpuMsPerNode: number;
  /** up's main thread alone, per node: what the one event loop pays for a join, a rotation, a node's steady state. */
  upMainThreadCpuMsPerNode: number;
  /** Lease renewals answered in the phase, and up's main-thread CPU per renewal (the steady state's unit of work). */
  leaseRenewals: number;
  upMainThreadCpuMsPerLeaseRenewal: number;
  upPeakRssMb: number;
  /** The worst simulator process's event-loop delay p99, and the simulator's CPU (% of one core, all processes). */
  generatorLagP99Ms: number;
  generatorCpuPercent: number;
  /**
   * Share of the phase in which some runnable task on the machine waited for a CPU (Linux PSI,
   * /proc/pressure/cpu "some"): how contended the shared machine was, beside the load average.
   */
  cpuPressurePercent: number;
  /**
   * Restart only: from the stop of `up` until the new one answered (its banner: the controller too); of
   * which the old one's stop (SIGTERM to exit); and until the new one's port took a connection (what
   * the nodes wait for).
   */
  downtimeSeconds?: number;
  stopSeconds?: number;
  listeningSeconds?: number;
  /** Restart only: the simulator's CPU from the stop until the new up listened (its dials refused meanwhile), in ms. */
  generatorDownCpuMs?: number;
  /** Restart only: the new up's CPU from its spawn to its banner, all threads and its main thread alone (the load moves these less than the seconds). */
  startCpuMs?: number;
  startMainThreadCpuMs?: number;
}

export interface FleetResult extends Machine {
  name: 'fleet';
  nodes: number;
  /** What the simulated kubelets spoke: h2 when the server negotiated it (and --http1 was not given). */
  protocol: Protocol;
  /** TLS connections opened per node in the join storm and in the rotation wave. */
  connectionsPerJoin: number;
  connectionsPerRotation: number;
  sloMet: boolean;
  slo: Record<string, boolean>;
  joinStormSeconds: number | null;
  leaseRenewP99Ms: number;
  /** p99 of the requests' waits for a new connection: not an SLO, the handshakes' queue. */
  connectWaitP99Ms: number;
  maxLeaseAgeSeconds: number;
  mutatingP99Ms: number;
  getP99Ms: number;
  listP99Ms: number;
  peakRssMb: { apiserver: number; controller: number; sameProcess: true };
  errors: number;
  restartErrors: number;
  throttled: number;
  cpuPercentPer1000Nodes: number;
  /** The bare server's CPU for one new client-certificate TLS connection with one GET, measured in this run. */
  bareConnectionCpuMs: number;
  /** up's CPU per node in the join storm and in the rotation wave, in bare connections (same run). */
  ratios: { joinCpuPerNodeInBareConnections: number; rotationCpuPerNodeInBareConnections: number };
  loadAverage: number[];
  params: FleetParams;
  phases: Partial<Record<Phase, PhaseResult>>;
}

const DEFAULTS: Omit<FleetParams, 'workers'> = { nodes: 100, joinSpreadMs: 10_000, steadyMs: 120_000, rotationSpreadMs: 60_000, scenarioTimeoutMs: 600_000, restart: true, rotation: true, http1: false };

/** The node's address: 10.0.0.1 upward, one per node (the serving policy refuses an IP another Node has). */
const ipOf = (i: number): string => `10.${((i + 1) >> 16) & 255}.${((i + 1) >> 8) & 255}.${(i + 1) & 255}`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The run's parameters with defaults filled in, the scenario it stops after, and how long up gets to exit. */
function resolveParams(params: Partial<FleetParams>): { p: FleetParams; stopAfter: FleetParams['stopAfter']; stopGraceMs: number } {
  const nodes = params.nodes ?? DEFAULTS.nodes;
  const p: FleetParams = { ...DEFAULTS, workers: defaultWorkers(nodes), ...params };
  // A profiled up stops after the steady state unless told otherwise, and gets time to write its profile
  // as it exits (seconds after a long run) before SIGKILL.
  return p.upCpuProfDir ? { p, stopAfter: p.stopAfter ?? 'steady', stopGraceMs: 60_000 } : { p, stopAfter: p.stopAfter, stopGraceMs: 10_000 };
}

export async function runFleetBench(params: Partial<FleetParams> = {}, log: (line: string) => void = () => undefined): Promise<FleetResult> {
  const { p, stopAfter, stopGraceMs } = resolveParams(params);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-fleet-'));
  const port = await freePort();
  let up = await startUp(dataDir, port, p.upCpuProfDir);
  const caPem = readFileSync(path.join(dataDir, CREDENTIAL_FILES.caPem), 'utf8');
  const client = { certPem: readFileSync(path.join(dataDir, CREDENTIAL_FILES.adminCertPem), 'utf8'), keyPem: readFileSync(path.join(dataDir, CREDENTIAL_FILES.adminKeyPem), 'utf8') };
  const admin = new HttpClient({ url: up.url, caPem, client }, 2);
  const protocol = p.http1 ? 'http/1.1' : await negotiatedProtocol(up.url, caPem);
  const target = { url: up.url, caPem, protocol, bootstrapToken: await createBootstrapToken(admin) };
  admin.close();
  const bareMs = await bareConnectionCpuMs(dataDir, { ...client, caPem });
  let fleet: FleetPool | undefined;
  const phases: Partial<Record<Phase, PhaseResult>> = {};
  let phase: Phase = 'join';
  let peakRss = 0;
  let acceptQueueMax = 0;
  let ticks = 0;
  let lastMainMs = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, up.proc.memory().rss);
    const queued = acceptQueueLength(port);
    acceptQueueMax = Math.max(acceptQueueMax, queued);
    if (++ticks % 5 === 0 && fleet) {
      // up's main thread over the last 5 s (a restarted up starts from 0): where a phase's time went, second by second.
      const mainMs = up.proc.mainThreadCpuMs();
      const mainPercent = round((mainMs >= lastMainMs ? mainMs - lastMainMs : mainMs) / 50, 0);
      lastMainMs = mainMs;
      void fleet.counts().then(
        (c) => log(`${phase} +${ticks}s: client ${c.client}, serving ${c.serving}, watching ${c.watching}, rotated ${c.rotated}, requests ${c.requests}, up main ${mainPercent}%, accept queue ${queued}`),
        () => undefined,
      );
    }
  }, 1000);

  let phaseStart = performance.now();
  let cpuStart = up.proc.cpuMs();
  let mainStart = up.proc.mainThreadCpuMs();
  let controllerStart = up.proc.threadCpuMs('controller');
  let genCpuStart = 0;
  let stallStart = cpuStallUs();
  const endPhase = async (next: Phase, reached: boolean): Promise<void> => {
    if (!fleet) return;
    const seconds = (performance.now() - phaseStart) / 1000;
    const d = await fleet.take();
    const genCpu = fleet.cpuMs();
    const upCpu = up.proc.cpuMs() - cpuStart;
    const mainCpu = up.proc.mainThreadCpuMs() - mainStart;
    const r: PhaseResult = {
      seconds: round(seconds, 1),
      reached,
      requests: d.mutating.length + d.get.length + d.list.length,
      mutatingMs: summarize(d.mutating),
      getMs: summarize(d.get),
      listMs: summarize(d.list),
      leaseRenewMs: summarize(d.lease),
      firstOnConnectionMs: summarize(d.firstOnConnection),
      connectWaitMs: summarize(d.connectWait),
      maxLeaseAgeSeconds: round(d.maxLeaseAgeSeconds, 1),
      errors: d.errors,
      firstError: d.firstError,
      errorKinds: d.errorKinds,
      closedByRotation: d.closedByRotation,
      throttled: d.throttled,
      leaseThrottled: d.leaseThrottled,
      retryAfterMaxSeconds: d.retryAfterMaxSeconds,
      ...(phase === 'restart' ? { renewedAfterStopS: summarize(d.renewedAfterStopSeconds) } : {}),
      connectionsOpened: d.connections,
      acceptQueueMax,
      upCpuPercent: round((upCpu / (seconds * 1000)) * 100, 1),
      upMainThreadCpuPercent: round((mainCpu / (seconds * 1000)) * 100, 1),
      upControllerThreadCpuPercent: round(((up.proc.threadCpuMs('controller') - controllerStart) / (seconds * 1000)) * 100, 1),
      upCpuMsPerNode: round(upCpu / p.nodes, 1),
      upMainThreadCpuMsPerNode: round(mainCpu / p.nodes, 2),
      leaseRenewals: d.lease.length,
      upMainThreadCpuMsPerLeaseRenewal: round(mainCpu / Math.max(1, d.lease.length), 3),
      upPeakRssMb: mb(Math.max(peakRss, up.proc.memory().rss)),
      generatorLagP99Ms: round(d.lagP99Ms, 1),
      generatorCpuPercent: round(((genCpu - genCpuStart) / (seconds * 1000)) * 100, 1),
      cpuPressurePercent: round(((cpuStallUs() - stallStart) / (seconds * 1e6)) * 100, 1),
    };
    phases[phase] = r;
    log(`${phase}: ${JSON.stringify(r)}`);
    phase = next;
    peakRss = 0;
    acceptQueueMax = 0;
    phaseStart = performance.now();
    cpuStart = up.proc.cpuMs();
    mainStart = up.proc.mainThreadCpuMs();
    controllerStart = up.proc.threadCpuMs('controller');
    genCpuStart = genCpu;
    stallStart = cpuStallUs();
  };
  /** Polls until `done` holds for the fleet's counts, or the scenario's time is up. */
  const everyNode = async (done: (c: NodeCounts) => boolean): Promise<NodeCounts | undefined> => {
    const deadline = Date.now() + p.scenarioTimeoutMs;
    while (Date.now() < deadline) {
      const c = await (fleet as FleetPool).counts();
      if (done(c)) return c;
      await sleep(250);
    }
    return undefined;
  };

  /** The restart scenario: up stopped and started again on its data directory and port, until every watch is back. */
  const restartUp = async (pool: FleetPool): Promise<void> => {
    pool.markRestart();
    // The phase's CPU spans two processes: what the stopped one used, then the new one's.
    const usedBeforeStop = up.proc.cpuMs() - cpuStart;
    const mainUsedBeforeStop = up.proc.mainThreadCpuMs() - mainStart;
    const controllerUsedBeforeStop = up.proc.threadCpuMs('controller') - controllerStart;
    const stoppedAt = performance.now();
    const genCpuAtStop = pool.cpuMs();
    await up.proc.stop(stopGraceMs);
    const stopSeconds = round((performance.now() - stoppedAt) / 1000, 1);
    let startError: string | undefined;
    const listened = listeningAgain(port, () => pool.cpuMs());
    try {
      up = await startUp(dataDir, port, p.upCpuProfDir);
    } catch (err) {
      // Reported as the scenario's outcome: the figures of the other scenarios are kept.
      startError = `up did not start again: ${String(err).slice(0, 300)}`;
    }
    pool.measureFrom(Date.now());
    const downtimeSeconds = round((performance.now() - stoppedAt) / 1000, 1);
    const listening = await listened.stop();
    const listeningSeconds = round((listening.at - stoppedAt) / 1000, 1);
    const generatorDownCpuMs = round(listening.sampled - genCpuAtStop, 0);
    const startCpuMs = round(up.proc.cpuMs(), 0);
    const startMainThreadCpuMs = round(up.proc.mainThreadCpuMs(), 0);
    cpuStart = up.proc.cpuMs() - usedBeforeStop;
    mainStart = up.proc.mainThreadCpuMs() - mainUsedBeforeStop;
    controllerStart = up.proc.threadCpuMs('controller') - controllerUsedBeforeStop;
    await endPhase('restart', startError === undefined && (await everyNode((c) => c.rewatched === p.nodes)) !== undefined);
    const restarted = phases.restart;
    if (restarted) Object.assign(restarted, { downtimeSeconds, stopSeconds, listeningSeconds, generatorDownCpuMs, startCpuMs, startMainThreadCpuMs });
    if (restarted && startError) restarted.firstError = startError;
  };

  let joinStormSeconds: number | null = null;
  try {
    fleet = await FleetPool.start(p.workers, target, Array.from({ length: p.nodes }, (_, i) => ({ name: `fleet-node-${i}`, ip: ipOf(i) })));
    genCpuStart = fleet.cpuMs();
    // Join storm.
    const startedAt = Date.now();
    phaseStart = performance.now();
    cpuStart = up.proc.cpuMs();
    mainStart = up.proc.mainThreadCpuMs();
    controllerStart = up.proc.threadCpuMs('controller');
    stallStart = cpuStallUs();
    fleet.join((i) => (i * p.joinSpreadMs) / p.nodes);
    const joined = await everyNode((c) => c.joined === p.nodes);
    if (joined) joinStormSeconds = round((joined.lastServingCertAt - startedAt) / 1000, 1);
    await endPhase('steady', joined !== undefined);
    // A profile is written when up exits, in the finally below.
    if (stopAfter === 'join') return summarizeFleet(p, protocol, phases, joinStormSeconds, bareMs);

    await sleep(p.steadyMs);
    await endPhase(p.rotation ? 'rotation' : 'restart', true);
    if (stopAfter === 'steady') return summarizeFleet(p, protocol, phases, joinStormSeconds, bareMs);

    if (p.rotation) {
      fleet.rotate(p.rotationSpreadMs);
      await endPhase('restart', (await everyNode((c) => c.rotated === p.nodes)) !== undefined);
      if (stopAfter === 'rotation') return summarizeFleet(p, protocol, phases, joinStormSeconds, bareMs);
    }

    if (!p.restart) return summarizeFleet(p, protocol, phases, joinStormSeconds, bareMs);
    await restartUp(fleet);
  } finally {
    clearInterval(sampler);
    await fleet?.stop();
    await up.proc.stop(stopGraceMs);
    rmSync(dataDir, { recursive: true, force: true });
  }
  return summarizeFleet(p, protocol, phases, joinStormSeconds, bareMs);
}

function summarizeFleet(p: FleetParams, protocol: Protocol, phases: Partial<Record<Phase, PhaseResult>>, joinStormSeconds: number | null, bareMs: number): FleetResult {
  const all = PHASES.map((ph) => phases[ph]).filter((r): r is PhaseResult => r !== undefined);
  const worst = (pick: (r: PhaseResult) => number): number => Math.max(0, ...all.map(pick));
  const outsideRestart = all.filter((r) => r !== phases.restart);
  const errors = outsideRestart.reduce((a, r) => a + r.errors, 0);
  const result = {
    mutatingP99Ms: worst((r) => r.mutatingMs.p99),
    getP99Ms: worst((r) => r.getMs.p99),
    listP99Ms: worst((r) => r.listMs.p99),
    leaseRenewP99Ms: worst((r) => r.leaseRenewMs.p99),
    connectWaitP99Ms: worst((r) => r.connectWaitMs.p99),
    maxLeaseAgeSeconds: worst((r) => r.maxLeaseAgeSeconds),
  };
  const slo = {
    mutatingP99Under1s: result.mutatingP99Ms <= 1000,
    getP99Under1s: result.getP99Ms <= 1000,
    listP99Under30s: result.listP99Ms <= 30_000,
    noLeaseOlderThan40s: result.maxLeaseAgeSeconds < 40,
    everyScenarioReached: PHASES.every((ph) => phases[ph]?.reached === true || (ph === 'restart' && !p.restart) || (ph === 'rotation' && !p.rotation) || (phases[ph] === undefined && ph !== 'join' && (p.stopAfter !== undefined || p.upCpuProfDir !== undefined))),
    noErrorsOutsideRestart: errors === 0,
  };
  const steady = phases.steady;
  return {
    name: 'fleet',
    ...machine(),
    nodes: p.nodes,
    protocol,
    connectionsPerJoin: round((phases.join?.connectionsOpened ?? 0) / p.nodes, 2),
    connectionsPerRotation: round((phases.rotation?.connectionsOpened ?? 0) / p.nodes, 2),
    sloMet: Object.values(slo).every(Boolean),
    slo,
    joinStormSeconds,
    ...result,
    peakRssMb: { apiserver: worst((r) => r.upPeakRssMb), controller: worst((r) => r.upPeakRssMb), sameProcess: true },
    errors,
    restartErrors: phases.restart?.errors ?? 0,
    throttled: all.reduce((a, r) => a + r.throttled, 0),
    cpuPercentPer1000Nodes: steady ? round((steady.upCpuPercent * 1000) / p.nodes, 2) : 0,
    bareConnectionCpuMs: bareMs,
    ratios: {
      joinCpuPerNodeInBareConnections: round((phases.join?.upCpuMsPerNode ?? 0) / Math.max(0.001, bareMs), 1),
      rotationCpuPerNodeInBareConnections: round((phases.rotation?.upCpuMsPerNode ?? 0) / Math.max(0.001, bareMs), 1),
    },
    loadAverage: os.loadavg().map((l) => round(l, 2)),
    params: p,
    phases,
  };
}

export function formatFleetTable(r: FleetResult): string {
  const rows = PHASES.flatMap((ph) => {
    const x = r.phases[ph];
    if (!x) return [];
    return [
      [
        `${ph}${x.downtimeSeconds === undefined ? '' : ` (down ${x.downtimeSeconds} s, stop ${x.stopSeconds ?? '?'}, listening ${x.listeningSeconds ?? '?'} (simulator CPU meanwhile ${x.generatorDownCpuMs ?? '?'} ms), start CPU main/all ${x.startMainThreadCpuMs ?? '?'}/${x.startCpuMs ?? '?'} ms, renewed after p99/max ${x.renewedAfterStopS?.p99 ?? '?'}/${x.renewedAfterStopS?.max ?? '?'} s)`}${x.reached ? '' : ' (not reached)'}`,
        String(x.seconds),
        String(x.requests),
        String(x.mutatingMs.p99),
        String(x.firstOnConnectionMs.p99),
        `${x.leaseRenewMs.p99}/${x.leaseRenewMs.max}`,
        String(x.getMs.p99),
        String(x.listMs.p99),
        String(x.connectWaitMs.p99),
        String(x.acceptQueueMax),
        String(x.maxLeaseAgeSeconds),
        `${x.errors} (+${Object.values(x.closedByRotation).reduce((a, n) => a + n, 0)})`,
        `${x.throttled}/${x.leaseThrottled}/${x.retryAfterMaxSeconds}`,
        String(round(x.connectionsOpened / r.nodes, 2)),
        `${x.upCpuPercent}/${x.upMainThreadCpuPercent}/${x.upControllerThreadCpuPercent}`,
        `${x.upCpuMsPerNode}/${x.upMainThreadCpuMsPerNode}`,
        String(x.upMainThreadCpuMsPerLeaseRenewal),
        String(x.upPeakRssMb),
        String(x.generatorLagP99Ms),
        String(x.generatorCpuPercent),
        String(x.cpuPressurePercent),
      ],
    ];
  });
  const head = ['scenario', 's', 'requests', 'mut p99 ms', 'first on conn p99', 'lease p99/max ms', 'get p99', 'list p99', 'conn wait p99', 'accept queue max', 'oldest lease s', 'errors (+closed by rotation)', '429s all/Lease/max Retry-After s', 'conns/node', 'up CPU % all/main/controller', 'up CPU ms/node all/main', 'main ms/Lease renewal', 'up RSS MB', 'gen lag p99 ms', 'gen CPU %', 'CPU pressure %'];
  const verdict = Object.entries(r.slo).map(([k, ok]) => `${ok ? 'ok' : 'BROKEN'} ${k}`);
  const bare = `bare server: ${r.bareConnectionCpuMs} ms CPU per client-certificate connection; up CPU per node = ${r.ratios.joinCpuPerNodeInBareConnections} of them in the join, ${r.ratios.rotationCpuPerNodeInBareConnections} in the rotation`;
  return [`fleet: ${r.nodes} nodes over ${r.protocol} (${r.params.workers} simulator processes), join storm ${r.joinStormSeconds ?? 'not reached'} s, load average ${r.loadAverage.join(' ')} (shared machine: absolute figures are noisy)`, formatTable(head, rows), bare, verdict.join(', ')].join('\n');
}

/** Where each run's JSON goes under `--out DIR`: one file per N (and per protocol when HTTP/1.1 was forced). */
export const fleetResultFile = (dir: string, r: { nodes: number; params: Pick<FleetParams, 'http1'> }): string => path.join(dir, `fleet-${r.nodes}${r.params.http1 ? '-http1' : ''}.json`);
