/**
 * The client-go work queue contract:
 * - a key waiting in the queue is stored once (the dirty set), however often it is added;
 * - a key being processed is never handed to a second worker; if it is added meanwhile it is
 *   processed again after `done` (so no change is lost and no key runs concurrently);
 * - after shutdown, adds are ignored; `get` still hands out what is queued and then returns undefined.
 */
import type { Clock } from '../../lib/clock.js';
import type { WorkqueueMetrics } from '../../metrics/workqueue.js';

export interface QueueOptions {
  name: string;
  clock: Clock;
  metrics?: WorkqueueMetrics;
}

export class WorkQueue {
  readonly name: string;
  protected readonly clock: Clock;
  private readonly metrics: WorkqueueMetrics | undefined;
  private readonly untrack: () => void;
  /** This queue's metric labels, for a series' first sample. */
  private readonly seriesLabels: () => { name: string };
  private queue: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  /** Keys being processed, with the time a worker got them. */
  private readonly processing = new Map<string, number>();
  private readonly addedAt = new Map<string, number>();
  private waiters: ((key: string | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shuttingDown = false;

  constructor(opts: QueueOptions) {
    this.name = opts.name;
    this.clock = opts.clock;
    this.metrics = opts.metrics;
    const labels = { name: opts.name };
    this.seriesLabels = () => labels;
    this.untrack =
      opts.metrics?.track({
        name: opts.name,
        inFlightStarts: () => this.processing.values(),
        depth: () => this.len(),
        now: () => this.clock.now(),
      }) ?? (() => {});
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics?.adds.inc(this.name, this.seriesLabels);
    this.dirty.add(key);
    if (!this.addedAt.has(key)) this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** The next key, waiting for one; undefined once shut down and empty. */
  get(): Promise<string | undefined> {
    const key = this.take();
    if (key !== undefined || this.shuttingDown) return Promise.resolve(key);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks the key processed; a key re-added during processing goes back in the queue now. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.metrics?.workDuration.observe(this.name, this.seriesLabels, (this.clock.now() - started) / 1000);
    if (this.dirty.has(key)) this.push(key);
    else if (this.processing.size === 0) this.wakeDrainers();
  }

  len(): number {
    return this.queue.length - this.head;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops accepting keys and wakes idle workers; queued keys are still handed out. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.onShutDown();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(undefined);
    if (this.processing.size === 0) this.wakeDrainers();
    this.untrack();
  }

  /** Shuts down and resolves once every key handed to a worker is `done` (client-go ShutDownWithDrain). */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Hook for layers that own timers. */
  protected onShutDown(): void {}

  private push(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      this.hand(key);
      waiter(key);
      return;
    }
    this.queue.push(key);
  }

  private take(): string | undefined {
    if (this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++] as string;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.hand(key);
    return key;
  }

  private hand(key: string): void {
    const now = this.clock.now();
    const added = this.addedAt.get(key);
    if (added !== undefined) this.metrics?.queueDuration.observe(this.name, this.seriesLabels, (now - added) / 1000);
    this.addedAt.delete(key);
    this.processing.set(key, now);
    this.dirty.delete(key);
  }

  private wakeDrainers(): void {
    const drainers = this.drainWaiters;
    this.drainWaiters = [];
    for (const d of drainers) d();
  }
}
