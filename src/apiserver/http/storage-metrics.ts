/**
 * apiserver_storage_objects{resource} and apiserver_storage_db_total_size_in_bytes{endpoint}, polled
 * in the background as kube-apiserver does (--etcd-count-metric-poll-period, default 1m, and
 * --etcd-db-metric-poll-interval, default 30s; 0 disables either): a scrape reads the last values and
 * never asks the store (a scrape used to cost one count per resource, ~40 etcd requests). Each poll
 * starts when the server does, so the series exist from the first poll on. A count that fails is
 * reported as -1, as upstream does; the sizes are what the store answers (on etcd, the members that
 * answer). The timers never keep the process alive and stop with the server.
 */
import { Gauge, type Registry } from 'prom-client';
import type { ResourceInfo } from '../../api/resources.js';
import type { Logger } from '../../log/logger.js';
import type { Store } from '../storage/store.js';

/** kube-apiserver's defaults. */
export const DEFAULT_COUNT_METRIC_POLL_PERIOD_MS = 60_000;
export const DEFAULT_DB_METRIC_POLL_INTERVAL_MS = 30_000;

/** A stored resource; its count reads its registry's own storage (events.k8s.io's is the core Events'). */
export interface StoredResource {
  info: ResourceInfo;
  count(): Promise<number>;
}

export interface StorageMetricsOptions {
  registry: Registry;
  store: Store;
  /** The stored resources and how many objects each holds. */
  resources: () => Iterable<StoredResource>;
  logger: Logger;
  /** --etcd-count-metric-poll-period (0 disables apiserver_storage_objects). */
  countPollPeriodMs?: number;
  /** --etcd-db-metric-poll-interval (0 disables apiserver_storage_db_total_size_in_bytes). */
  dbPollIntervalMs?: number;
}

export class StorageMetrics {
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(private readonly opts: StorageMetricsOptions) {}

  /** Polls now, then every period; a poll still running when the next is due is not doubled. */
  start(): void {
    const { registry, store, resources, logger } = this.opts;
    const objects = new Gauge({ name: 'apiserver_storage_objects', help: 'Number of stored objects at the time of last check split by kind.', labelNames: ['resource'], registers: [registry] });
    this.every(this.opts.countPollPeriodMs ?? DEFAULT_COUNT_METRIC_POLL_PERIOD_MS, async () => {
      const seen = new Set<string>();
      for (const { info: r, count } of resources()) {
        // events.k8s.io's Events are the core ones: one count per label.
        const resource = r.group === '' ? r.plural : `${r.plural}.${r.group}`;
        if (seen.has(resource)) continue;
        seen.add(resource);
        const n = await count().catch((err: unknown) => {
          logger.debug({ err, resource }, 'failed to update storage count metric');
          return -1;
        });
        if (!this.stopped) objects.set({ resource }, n);
      }
    });
    if (!store.sizeBytes) return;
    const sizeOf = store.sizeBytes.bind(store);
    const sizes = new Gauge({ name: 'apiserver_storage_db_total_size_in_bytes', help: 'Total size of the storage database file physically allocated in bytes.', labelNames: ['endpoint'], registers: [registry] });
    this.every(this.opts.dbPollIntervalMs ?? DEFAULT_DB_METRIC_POLL_INTERVAL_MS, async () => {
      const found = await sizeOf().catch((err: unknown) => {
        logger.debug({ err }, 'failed to update storage db size metric');
        return undefined;
      });
      if (!found || this.stopped) return;
      sizes.reset();
      for (const size of found) sizes.set({ endpoint: size.endpoint }, size.bytes);
    });
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
  }

  /** Runs `poll` now and `periodMs` after each run ends (0: never). */
  private every(periodMs: number, poll: () => Promise<void>): void {
    if (periodMs <= 0) return;
    const slot = this.timers.length;
    const run = (): void => {
      void poll()
        .catch((err: unknown) => this.opts.logger.error({ err }, 'bug: storage metrics poll failed'))
        .finally(() => {
          if (this.stopped) return;
          this.timers[slot] = setTimeout(run, periodMs).unref();
        });
    };
    this.timers.push(setTimeout(run, 0).unref());
  }
}
