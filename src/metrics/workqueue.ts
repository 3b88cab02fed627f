/**
 * client-go workqueue metrics, with client-go's exact names and `name` label so existing dashboards work:
 * - workqueue_depth{name}: items waiting (not yet handed to a worker)
 * - workqueue_adds_total{name}: adds that were accepted (not deduplicated away)
 * - workqueue_queue_duration_seconds{name}: time from add to get
 * - workqueue_work_duration_seconds{name}: time from get to done
 * - workqueue_unfinished_work_seconds{name}: summed age of work in progress (stuck-worker signal)
 * - workqueue_longest_running_processor_seconds{name}: age of the oldest work in progress
 * - workqueue_retries_total{name}: rate-limited re-adds
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { once } from './registry.js';

/** What a live queue reports when metrics are scraped. */
export interface InFlightSource {
  readonly name: string;
  /** Start times (clock ms) of the items being processed now. */
  inFlightStarts(): Iterable<number>;
  now(): number;
}

const BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10];

export class WorkqueueMetrics {
  readonly depth: Gauge<'name'>;
  readonly adds: Counter<'name'>;
  readonly queueDuration: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
  readonly retries: Counter<'name'>;
  private readonly sources = new Set<InFlightSource>();

  private constructor(registry: Registry) {
    const registers = [registry];
    const sources = this.sources;
    this.depth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers });
    this.adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers });
    this.queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name'],
      buckets: BUCKETS,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name'],
      buckets: BUCKETS,
      registers,
    });
    this.retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers });
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: 'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration',
      labelNames: ['name'],
      registers,
      collect() {
        this.reset();
        for (const s of sources) {
          let total = 0;
          for (const start of s.inFlightStarts()) total += s.now() - start;
          this.set({ name: s.name }, total / 1000);
        }
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running',
      labelNames: ['name'],
      registers,
      collect() {
        this.reset();
        for (const s of sources) {
          let oldest = 0;
          for (const start of s.inFlightStarts()) oldest = Math.max(oldest, s.now() - start);
          this.set({ name: s.name }, oldest / 1000);
        }
      },
    });
  }

  static for(registry: Registry): WorkqueueMetrics {
    return once(registry, 'workqueue', () => new WorkqueueMetrics(registry));
  }

  /** Makes a queue's in-flight work visible to the unfinished/longest-running gauges until `untrack`. */
  track(source: InFlightSource): () => void {
    this.sources.add(source);
    this.depth.set({ name: source.name }, 0);
    this.adds.inc({ name: source.name }, 0);
    this.retries.inc({ name: source.name }, 0);
    return () => this.sources.delete(source);
  }
}
