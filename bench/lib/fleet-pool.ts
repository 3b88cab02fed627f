/**
 * The fleet simulator's processes, seen from the bench: W forked workers (bench/lib/fleet-worker.ts),
 * node i in worker i mod W, so each worker's share of a join storm is spread over the whole storm.
 * The bench sends commands to all of them and merges what they report: node counts are summed, raw
 * latency samples are concatenated before percentiles are taken (percentiles cannot be averaged), the
 * event-loop delay is the worst worker's, and their CPU is summed.
 */
import { forkNode, projectScript, type NodeProcess } from './child.js';
import type { FleetTarget } from './kubelet-sim.js';

export interface NodeCounts {
  client: number;
  serving: number;
  watching: number;
  /** Both certificates and both watches. */
  joined: number;
  /** Rotated, and both watches open again. */
  rotated: number;
  /** Both watches opened again since markRestart. */
  rewatched: number;
  /** When the last serving certificate arrived (epoch ms; 0 for none). */
  lastServingCertAt: number;
  requests: number;
}

export interface WorkerSamples {
  mutating: number[];
  get: number[];
  list: number[];
  lease: number[];
  /** Latencies of the requests that had waited for their connection (the first on each), of every kind. */
  firstOnConnection: number[];
  /** Requests' waits for a new connection to be ready. */
  connectWait: number[];
  errors: number;
  firstError: string | undefined;
  /** Errors counted by kind (fleet-worker.ts `errorKind`). */
  errorKinds: Record<string, number>;
  /** Failures the nodes' own rotations caused (kubelet-sim.ts FleetRecorder.closedByRotation), by kind; not errors. */
  closedByRotation: Record<string, number>;
  throttled: number;
  /** Of those, answers to Lease renewals (node-high: never starved, so 0); and the longest Retry-After told. */
  leaseThrottled: number;
  retryAfterMaxSeconds: number;
  /**
   * Restart only: for each node, seconds from the stop of up to its first Lease renewal after it:
   * the downtime plus the wait to reconnect and renew (a Lease's age then is this plus up to one
   * renewal period); past the downtime, it is what the reconnect storm adds.
   */
  renewedAfterStopSeconds: number[];
  /** TLS connections the phase's simulated kubelets opened. */
  connections: number;
  maxLeaseAgeSeconds: number;
  lagP99Ms: number;
}

export type FleetToWorker =
  | { type: 'init'; target: FleetTarget; nodes: { name: string; ip: string }[] }
  | { type: 'join'; delays: number[] }
  | { type: 'rotate'; spreadMs: number }
  | { type: 'markRestart' }
  | { type: 'measureFrom'; epochMs: number }
  | { type: 'counts'; id: number }
  | { type: 'take'; id: number }
  | { type: 'stop' };

export type WorkerToFleet = { type: 'ready' } | { type: 'counts'; id: number; counts: NodeCounts } | { type: 'samples'; id: number; samples: WorkerSamples };

/**
 * What an error message says without the parts that differ per node: an HTTP error by its request
 * and status, anything else with its long numbers (names, resourceVersions, ports) blanked.
 */
export function errorKind(message: string): string {
  const http = /^(?:[A-Z]+ [\w/.]+: )?HTTP \d+/.exec(message);
  return http ? http[0] : message.replace(/\d{3,}/g, 'N').slice(0, 100);
}

function mergeCounts(all: Record<string, number>[]): Record<string, number> {
  const merged: Record<string, number> = {};
  for (const counts of all) for (const [k, n] of Object.entries(counts)) merged[k] = (merged[k] ?? 0) + n;
  return merged;
}

/** Workers for N nodes unless told: one per 250 nodes, at most 8 (each is a Node process of ~50 MB). */
export const defaultWorkers = (nodes: number): number => Math.min(8, Math.max(1, Math.ceil(nodes / 250)));

export class FleetPool {
  private nextId = 0;

  private constructor(
    private readonly procs: NodeProcess[],
    /** Node indices owned by each worker, in the order the worker holds them. */
    private readonly owned: number[][],
  ) {}

  static async start(workers: number, target: FleetTarget, nodes: { name: string; ip: string }[]): Promise<FleetPool> {
    const owned = Array.from({ length: workers }, (_, w) => nodes.map((_, i) => i).filter((i) => i % workers === w));
    const procs = owned.map(() => forkNode(projectScript('bench/lib/fleet-worker')));
    const pool = new FleetPool(procs, owned);
    await Promise.all(
      procs.map((p, w) => {
        const ready = pool.reply(p, (m) => (m.type === 'ready' ? true : undefined));
        pool.send(p, { type: 'init', target, nodes: (owned[w] ?? []).map((i) => nodes[i] as { name: string; ip: string }) });
        return ready;
      }),
    );
    return pool;
  }

  private send(p: NodeProcess, m: FleetToWorker): void {
    p.child.send(m);
  }

  /** The first message `pick` accepts; rejects if the worker exits first. */
  private reply<T>(p: NodeProcess, pick: (m: WorkerToFleet) => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: WorkerToFleet): void => {
        const v = pick(m);
        if (v === undefined) return;
        done();
        resolve(v);
      };
      const onExit = (): void => {
        done();
        reject(new Error(`fleet worker ${p.pid} exited: ${p.stderrTail()}`));
      };
      const done = (): void => {
        p.child.off('message', onMessage);
        p.child.off('exit', onExit);
      };
      p.child.on('message', onMessage);
      p.child.once('exit', onExit);
    });
  }

  /** Node i starts `delayOf(i)` ms from now. */
  join(delayOf: (i: number) => number): void {
    this.procs.forEach((p, w) => this.send(p, { type: 'join', delays: (this.owned[w] ?? []).map(delayOf) }));
  }

  rotate(spreadMs: number): void {
    for (const p of this.procs) this.send(p, { type: 'rotate', spreadMs });
  }

  markRestart(): void {
    for (const p of this.procs) this.send(p, { type: 'markRestart' });
  }

  /** Latencies of requests started before `epochMs` are not counted (a server restart's downtime). */
  measureFrom(epochMs: number): void {
    for (const p of this.procs) this.send(p, { type: 'measureFrom', epochMs });
  }

  async counts(): Promise<NodeCounts> {
    const id = this.nextId++;
    const all = await Promise.all(
      this.procs.map((p) => {
        const r = this.reply(p, (m) => (m.type === 'counts' && m.id === id ? m.counts : undefined));
        this.send(p, { type: 'counts', id });
        return r;
      }),
    );
    const sum = (k: keyof NodeCounts): number => all.reduce((a, c) => a + c[k], 0);
    return {
      client: sum('client'),
      serving: sum('serving'),
      watching: sum('watching'),
      joined: sum('joined'),
      rotated: sum('rotated'),
      rewatched: sum('rewatched'),
      lastServingCertAt: Math.max(0, ...all.map((c) => c.lastServingCertAt)),
      requests: sum('requests'),
    };
  }

  /** Every worker's samples of the phase, merged; each worker starts the next phase. */
  async take(): Promise<WorkerSamples> {
    const id = this.nextId++;
    const all = await Promise.all(
      this.procs.map((p) => {
        const r = this.reply(p, (m) => (m.type === 'samples' && m.id === id ? m.samples : undefined));
        this.send(p, { type: 'take', id });
        return r;
      }),
    );
    return {
      mutating: all.flatMap((s) => s.mutating),
      get: all.flatMap((s) => s.get),
      list: all.flatMap((s) => s.list),
      lease: all.flatMap((s) => s.lease),
      firstOnConnection: all.flatMap((s) => s.firstOnConnection),
      connectWait: all.flatMap((s) => s.connectWait),
      errors: all.reduce((a, s) => a + s.errors, 0),
      firstError: all.find((s) => s.firstError !== undefined)?.firstError,
      errorKinds: mergeCounts(all.map((s) => s.errorKinds)),
      closedByRotation: mergeCounts(all.map((s) => s.closedByRotation)),
      throttled: all.reduce((a, s) => a + s.throttled, 0),
      leaseThrottled: all.reduce((a, s) => a + s.leaseThrottled, 0),
      retryAfterMaxSeconds: Math.max(0, ...all.map((s) => s.retryAfterMaxSeconds)),
      renewedAfterStopSeconds: all.flatMap((s) => s.renewedAfterStopSeconds),
      connections: all.reduce((a, s) => a + s.connections, 0),
      maxLeaseAgeSeconds: Math.max(0, ...all.map((s) => s.maxLeaseAgeSeconds)),
      lagP99Ms: Math.max(0, ...all.map((s) => s.lagP99Ms)),
    };
  }

  /** CPU time of every worker so far, in ms. */
  cpuMs(): number {
    return this.procs.reduce((a, p) => a + p.cpuMs(), 0);
  }

  get size(): number {
    return this.procs.length;
  }

  async stop(): Promise<void> {
    for (const p of this.procs) if (p.child.connected) this.send(p, { type: 'stop' });
    await Promise.all(this.procs.map((p) => p.stop(5000)));
  }
}
