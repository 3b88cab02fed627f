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
import { Counter, Gauge, type Registry } from 'prom-client';
import { ScrapedCounter } from '../lib/scraped-counter.js';
import { ScrapedHistogram } from '../lib/scraped-histogram.js';
import { once } from './registry.js';

/** What a live queue reports when metrics are scraped. */
export interface InFlightSource {
  readonly name: string;
  /** Start times (clock ms) of the items being processed now. */
  inFlightStarts(): Iterable<number>;
  /** Items waiting (workqueue_depth). */
  depth(): number;
  now(): number;
}

const BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10];

/**
 * Every add, hand-out and done of every key records here, so the hot series are plain additions
 * handed to the registry when it is scraped (ScrapedCounter, ScrapedHistogram: prom-client hashes
 * the labels on each call) and the depth is read from the queue then; the key of each series is the
 * queue's name.
 */
export class WorkqueueMetrics {
  readonly adds: ScrapedCounter<'name'>;
  readonly queueDuration: ScrapedHistogram<'name'>;
  readonly workDuration: ScrapedHistogram<'name'>;
  readonly retries: Counter<'name'>;
  private readonly sources = new Set<InFlightSource>();

  private constructor(registry: Registry) {
    const registers = [registry];
    const sources = this.sources;
    new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
      collect() {
        this.reset();
        for (const s of sources) this.set({ name: s.name }, s.depth());
      },
    });
    this.adds = new ScrapedCounter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers });
    this.queueDuration = new ScrapedHistogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name'],
      buckets: BUCKETS,
      registers,
    });
    this.workDuration = new ScrapedHistogram({
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
    this.adds.zero(source.name, () => ({ name: source.name }));
    this.retries.inc({ name: source.name }, 0);
    return () => this.sources.delete(source);
  }
}
