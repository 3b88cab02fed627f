/**
 * One process of the fleet simulator (forked by bench/lib/fleet-pool.ts): it owns a slice of the
 * simulated kubelets, records their requests' latencies by phase, and answers the parent over IPC.
 * Spreading the nodes over processes keeps the load generator's own event loop from being what the
 * fleet bench measures (one loop lagged 94 s at p99 starting 5,000 kubelets).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { errorKind, type FleetToWorker, type NodeCounts, type WorkerSamples, type WorkerToFleet } from './fleet-pool.js';
import { SimKubelet, type FleetRecorder, type FleetTarget, type RequestKind } from './kubelet-sim.js';

/** Latencies, errors and 429s of the phase under way. */
export class Recorder implements FleetRecorder {
  private data = Recorder.fresh();
  /** Latencies of requests started before this (epoch ms) are left out: see `measureFrom`. */
  private from = 0;

  private static fresh() {
    return { mutating: [] as number[], get: [] as number[], list: [] as number[], lease: [] as number[], firstOnConnection: [] as number[], connectWait: [] as number[], errors: 0, firstError: undefined as string | undefined, errorKinds: {} as Record<string, number>, closedByRotation: {} as Record<string, number>, throttled: 0, leaseThrottled: 0, retryAfterMaxSeconds: 0, connections: 0 };
  }

  latency(kind: RequestKind, ms: number, leaseRenewal: boolean, firstOnConnection: boolean): void {
    if (Date.now() - ms < this.from) return;
    this.data[kind].push(ms);
    if (leaseRenewal) this.data.lease.push(ms);
    if (firstOnConnection) this.data.firstOnConnection.push(ms);
  }

  connectWait(ms: number): void {
    this.data.connectWait.push(ms);
  }

  error(what: string): void {
    this.data.errors++;
    this.data.firstError ??= what;
    const kind = errorKind(what);
    this.data.errorKinds[kind] = (this.data.errorKinds[kind] ?? 0) + 1;
  }

  closedByRotation(what: string): void {
    const kind = errorKind(what);
    this.data.closedByRotation[kind] = (this.data.closedByRotation[kind] ?? 0) + 1;
  }

  throttled(retryAfterSeconds: number, leaseRenewal: boolean): void {
    this.data.throttled++;
    if (leaseRenewal) this.data.leaseThrottled++;
    this.data.retryAfterMaxSeconds = Math.max(this.data.retryAfterMaxSeconds, retryAfterSeconds);
  }

  connected(): void {
    this.data.connections++;
  }

  requests(): number {
    return this.data.mutating.length + this.data.get.length + this.data.list.length;
  }

  /**
   * Counts only requests started from `epochMs` on: a request sent while the server was down measures
   * the downtime, which the restart scenario judges by its own criteria (watches back, Lease age).
   */
  measureFrom(epochMs: number): void {
    this.from = epochMs;
  }

  /** What the phase recorded; starts the next. */
  take() {
    const d = this.data;
    this.data = Recorder.fresh();
    return d;
  }
}

/** The simulated kubelets of one process, driven by the parent's messages. */
export class FleetSlice {
  private readonly rec = new Recorder();
  private readonly nodes: SimKubelet[];
  private readonly lag = monitorEventLoopDelay({ resolution: 10 });
  private readonly sampler: NodeJS.Timeout;
  private opensBefore: number[] = [];
  private maxLeaseAge = 0;
  /** When up was stopped for the restart (epoch ms), and each node's first renewal since, in s (NaN: none yet). */
  private stoppedAt = 0;
  private renewedAfter: number[] = [];

  constructor(target: FleetTarget, nodes: { name: string; ip: string }[]) {
    this.nodes = nodes.map((n) => new SimKubelet(n.name, n.ip, target, this.rec));
    this.lag.enable();
    this.sampler = setInterval(() => this.sampleLeases(), 1000);
  }

  private sampleLeases(): void {
    const now = Date.now();
    this.nodes.forEach((n, i) => {
      if (n.lastRenewal > 0) this.maxLeaseAge = Math.max(this.maxLeaseAge, (now - n.lastRenewal) / 1000);
      // Sampled each second, renewed each 10 s: the first renewal since is still the last one.
      if (this.stoppedAt > 0 && Number.isNaN(this.renewedAfter[i]) && n.lastRenewal >= this.stoppedAt) this.renewedAfter[i] = (n.lastRenewal - this.stoppedAt) / 1000;
    });
  }

  /** Starts node i at `delays[i]` ms from now. */
  join(delays: number[]): void {
    this.nodes.forEach((n, i) => setTimeout(() => void n.join().catch((err: unknown) => this.rec.error(`join ${n.name}: ${String(err)}`)), delays[i] ?? 0));
  }

  rotate(spreadMs: number): void {
    for (const n of this.nodes) setTimeout(() => void n.rotate().catch((err: unknown) => this.rec.error(`rotate ${n.name}: ${String(err)}`)), Math.random() * spreadMs);
  }

  /** Remembers how many watches each node has opened, before the server restart; times each node's first renewal after it. */
  markRestart(): void {
    this.opensBefore = this.nodes.map((n) => n.watchOpens);
    this.stoppedAt = Date.now();
    this.renewedAfter = this.nodes.map(() => NaN);
  }

  measureFrom(epochMs: number): void {
    this.rec.measureFrom(epochMs);
  }

  counts(): NodeCounts {
    const count = (f: (n: SimKubelet, i: number) => boolean): number => this.nodes.filter(f).length;
    this.sampleLeases();
    return {
      client: count((n) => n.clientCertAt > 0),
      serving: count((n) => n.servingCertAt > 0),
      watching: count((n) => n.watchesOpen === 2),
      joined: count((n) => n.servingCertAt > 0 && n.watchesOpen === 2),
      rotated: count((n) => n.rotated),
      rewatched: count((n, i) => n.watchesOpen === 2 && n.watchOpens >= (this.opensBefore[i] ?? 0) + 2),
      lastServingCertAt: Math.max(0, ...this.nodes.map((n) => n.servingCertAt)),
      requests: this.rec.requests(),
    };
  }

  /** The phase's samples, with this loop's delay and the oldest Lease seen; starts the next phase. */
  take(): WorkerSamples {
    this.sampleLeases();
    const renewedAfterStopSeconds = this.renewedAfter.filter((s) => !Number.isNaN(s));
    const s = { ...this.rec.take(), renewedAfterStopSeconds, maxLeaseAgeSeconds: this.maxLeaseAge, lagP99Ms: this.lag.percentile(99) / 1e6 };
    this.maxLeaseAge = 0;
    this.stoppedAt = 0;
    this.renewedAfter = [];
    this.lag.reset();
    return s;
  }

  stop(): void {
    clearInterval(this.sampler);
    this.lag.disable();
    for (const n of this.nodes) n.stop();
  }
}

const send = (m: WorkerToFleet): void => void process.send?.(m);

if (process.send) {
  let slice: FleetSlice | undefined;
  process.on('message', (m: FleetToWorker) => {
    if (m.type === 'init') {
      slice = new FleetSlice(m.target, m.nodes);
      send({ type: 'ready' });
      return;
    }
    if (!slice) return;
    switch (m.type) {
      case 'join':
        slice.join(m.delays);
        break;
      case 'rotate':
        slice.rotate(m.spreadMs);
        break;
      case 'markRestart':
        slice.markRestart();
        break;
      case 'measureFrom':
        slice.measureFrom(m.epochMs);
        break;
      case 'counts':
        send({ type: 'counts', id: m.id, counts: slice.counts() });
        break;
      case 'take':
        send({ type: 'samples', id: m.id, samples: slice.take() });
        break;
      case 'stop':
        // The nodes' retry loops and join timers would keep the process alive: it is done.
        slice.stop();
        process.exit(0);
    }
  });
}
