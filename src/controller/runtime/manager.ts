/**
 * The manager (controller-runtime's shape): informers run on every replica so a standby is warm; the
 * runners (queue + workers per controller) and leader-only runnables start only while this process
 * leads (when leader election is on). /readyz passes once every informer synced; /healthz while the
 * process serves. On abort: stop taking work, finish in-flight reconciles within the deadline,
 * release the lease.
 */
import { setMaxListeners } from 'node:events';
import type { Registry } from 'prom-client';
import type { KObject } from '../../api/meta.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import { ControllerMetrics } from '../../metrics/controller.js';
import type { ReadyCheck } from '../../metrics/http.js';
import { InformerMetrics } from '../../metrics/informer.js';
import { WorkqueueMetrics } from '../../metrics/workqueue.js';
import type { KubeClient } from '../client/kube-client.js';
import { keyOf, type Indexers } from '../informer/cache.js';
import { Informer } from '../informer/informer.js';
import { clientListWatch, type ListWatch, type ResourceRef } from '../informer/list-watch.js';
import { LeaderElectionLost } from './election-lost.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import type { Reconciler } from './reconcile.js';
import { Runner } from './runner.js';
import { RateLimitingQueue } from '../workqueue/rate-limiting.js';
import { controllerRateLimiter, type RateLimiterOptions } from '../workqueue/rate-limiter.js';

export interface InformerSpec<T extends KObject> {
  name: string;
  resource: ResourceRef;
  indexers?: Indexers<T>;
  /** Replaces the client-node ListWatch (tests). */
  listWatch?: ListWatch<T>;
  /** Applied to objects before they are cached (default: managedFields stripped). */
  transform?: (obj: T) => T;
}

/** Maps an event's object to the keys to reconcile; defaults to the object's own key. */
export type KeyMapper<T> = (obj: Readonly<T>) => string[];

export interface ControllerSpec {
  name: string;
  reconciler: Reconciler;
  workers: number;
  rateLimiter?: RateLimiterOptions;
  /** Informers whose events enqueue keys of this controller. */
  watches: Watch[];
}

/** An informer a controller watches, with how its objects map to the controller's queue keys. */
export interface Watch {
  subscribe(enqueue: (key: string) => void): void;
}

/** Watches `informer`: each added, updated or deleted object enqueues `keys(obj)` (by default its own key). */
export function watch<T extends KObject>(informer: Informer<T>, keys: KeyMapper<T> = (obj) => [keyOf(obj)]): Watch {
  return {
    subscribe(enqueue) {
      const add = (obj: Readonly<T>): void => keys(obj).forEach(enqueue);
      informer.addHandlers({ add, update: (_old, obj) => add(obj), delete: add });
    },
  };
}

/** What the manager itself does with an informer, whatever it holds. */
type RunningInformer = Pick<Informer<KObject>, 'name' | 'run' | 'hasSynced' | 'waitForSync'>;

/** Something that runs until its signal aborts (a periodic cleaner, a CA reloader). */
export interface Runnable {
  name: string;
  /** True: only while leader. */
  needLeaderElection: boolean;
  start(signal: AbortSignal): Promise<void>;
}

export interface ManagerOptions {
  client: KubeClient;
  logger: Logger;
  registry: Registry;
  clock: Clock;
  /** Omit to run without leader election. */
  leaderElection?: LeaderElectionOptions;
  /**
   * The client the Lease is renewed with (default `client`). kube-controller-manager gives leader
   * election a client of its own: its kept-alive connection never waits behind the controllers'
   * requests, nor for a new TLS handshake queued behind a storm of joining kubelets (issue 29).
   */
  leaderElectionClient?: KubeClient;
  informerDefaults?: { resyncPeriodMs?: number; bookmarkIntervalMs?: number; backoffInitialMs?: number; backoffMaxMs?: number; pageSize?: number };
  /** How long in-flight reconciles may take after shutdown starts. */
  gracefulShutdownMs?: number;
}

export class Manager {
  private readonly informers: RunningInformer[] = [];
  private readonly controllers: ControllerSpec[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly elector: LeaderElector | undefined;
  private readonly logger: Logger;
  private running = false;

  constructor(private readonly opts: ManagerOptions) {
    this.logger = opts.logger.child({ component: 'manager' });
    this.elector = opts.leaderElection
      ? new LeaderElector(opts.leaderElection, { client: opts.leaderElectionClient ?? opts.client, clock: opts.clock, logger: opts.logger, registry: opts.registry })
      : undefined;
  }

  /** What controllers registered on this manager share: metrics registry, base logger, clock. */
  get shared(): { registry: Registry; logger: Logger; clock: Clock } {
    return { registry: this.opts.registry, logger: this.opts.logger, clock: this.opts.clock };
  }

  informer<T extends KObject>(spec: InformerSpec<T>): Informer<T> {
    const inf = new Informer<T>({
      name: spec.name,
      listWatch: spec.listWatch ?? clientListWatch<T>(this.opts.client, spec.resource),
      clock: this.opts.clock,
      logger: this.opts.logger,
      metrics: InformerMetrics.for(this.opts.registry),
      indexers: spec.indexers,
      transform: spec.transform,
      ...this.opts.informerDefaults,
    });
    this.informers.push(inf);
    return inf;
  }

  addController(spec: ControllerSpec): void {
    this.controllers.push(spec);
  }

  add(runnable: Runnable): void {
    this.runnables.push(runnable);
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.running;
  }

  /** Readiness: every informer synced (a standby with synced caches is ready too). */
  readyChecks(): ReadyCheck[] {
    return this.informers.map((inf) => ({ name: `informer-sync-${inf.name}`, check: () => inf.hasSynced() }));
  }

  /**
   * Runs until `signal` aborts. Resolves after a clean shutdown; rejects with an Error when leadership
   * was lost (the process should exit so it restarts as a fresh candidate, like controller-runtime).
   */
  async run(signal: AbortSignal): Promise<void> {
    // Every runner, informer and in-flight request listens on these signals; the default cap of 10
    // listeners is a leak heuristic that a manager with several controllers legitimately exceeds.
    const informersStop = new AbortController();
    setMaxListeners(0, signal, informersStop.signal);
    const informerRuns = this.informers.map((inf) => inf.run(informersStop.signal));
    // They stop with the process, or once leadership is lost: the run must end then so that the
    // process exits (a run waiting on them left a live process that never campaigned again).
    const always = this.runnables.filter((r) => !r.needLeaderElection).map((r) => this.guard(r, AbortSignal.any([signal, informersStop.signal])));
    try {
      if (!this.elector) {
        await this.lead(signal);
        return;
      }
      const clean = await this.elector.run(signal, (leading) => this.lead(leading));
      if (!clean) throw new LeaderElectionLost();
    } finally {
      informersStop.abort();
      await Promise.all([...informerRuns, ...always]);
    }
  }

  /** Everything that needs leadership: waits for caches, then runs runners and leader-only runnables. */
  private async lead(signal: AbortSignal): Promise<void> {
    this.running = true;
    await Promise.all(this.informers.map((inf) => inf.waitForSync(signal)));
    if (signal.aborted) {
      this.running = false;
      return;
    }
    this.logger.info({ controllers: this.controllers.map((c) => c.name) }, 'starting controllers');
    const runs = this.controllers.map((c) => this.buildRunner(c).run(signal, this.opts.gracefulShutdownMs));
    const leaderRunnables = this.runnables.filter((r) => r.needLeaderElection).map((r) => this.guard(r, signal));
    await Promise.all([...runs, ...leaderRunnables]);
    this.running = false;
    this.logger.info('controllers stopped');
  }

  private buildRunner(spec: ControllerSpec): Runner {
    const { clock, registry, logger } = this.opts;
    const queue = new RateLimitingQueue({
      name: spec.name,
      clock,
      metrics: WorkqueueMetrics.for(registry),
      rateLimiter: controllerRateLimiter(clock, spec.rateLimiter),
    });
    for (const w of spec.watches) w.subscribe((key) => queue.add(key));
    return new Runner({ name: spec.name, queue, reconciler: spec.reconciler, workers: spec.workers, logger, clock, metrics: ControllerMetrics.for(registry) });
  }

  /** Runs a runnable; a failure is logged, never an unhandled rejection. */
  private guard(r: Runnable, signal: AbortSignal): Promise<void> {
    return r.start(signal).catch((err: unknown) => this.logger.error({ err, runnable: r.name }, 'runnable failed'));
  }
}
