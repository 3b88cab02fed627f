/**
 * Flow control's metrics, named and labelled as kube-apiserver's:
 * - apiserver_flowcontrol_dispatched_requests_total{priority_level,flow_schema}
 * - apiserver_flowcontrol_rejected_requests_total{priority_level,flow_schema,reason}: queue-full,
 *   time-out, cancelled, concurrency-limit
 * - apiserver_flowcontrol_current_inqueue_requests{priority_level,flow_schema}
 * - apiserver_flowcontrol_current_executing_requests{priority_level,flow_schema}
 * - apiserver_flowcontrol_request_wait_duration_seconds{priority_level,flow_schema,execute}
 * - apiserver_flowcontrol_nominal_limit_seats{priority_level}
 * - apiserver_dropped_requests_total{request_kind}: every 429 of flow control, readOnly or mutating
 * and, having no upstream twin, under the project's prefix:
 * - kube_identity_apiserver_event_loop_delay_seconds, kube_identity_apiserver_event_loop_utilization:
 *   the smoothed signal flow control sheds on (loop-saturation.ts), read at each scrape
 * Every request is dispatched, executes and waited (0 s when a seat was free), so the series of a
 * (level, schema) are plain numbers, handed to prom-client when scraped (as http/metrics.ts does):
 * prom-client validates and hashes the labels on every inc/observe, a labelled child's too, which
 * cost about 3% of a GET. Rejections are rare and counted through prom-client directly.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { ScrapedCounter } from '../../lib/scraped-counter.js';
import { ScrapedHistogram } from '../../lib/scraped-histogram.js';
import type { LoopSaturation } from './loop-saturation.js';
import type { Rejection } from './priority-level.js';

/** Upstream's buckets for the queue wait. */
const WAIT_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];

type FlowLabel = 'priority_level' | 'flow_schema';

/** The series of one (priority level, flow schema). */
export class FlowSeries {
  /** Requests waiting in a queue, and executing: read when scraped. */
  inQueue = 0;
  executing = 0;
  readonly key: string;
  private readonly executedKey: string;
  private readonly refusedKey: string;
  /** What the scraped metrics read the first time a key is counted: made once, not per request. */
  readonly labelsOf = (): Record<FlowLabel, string> => this.labels;
  private readonly executedLabels = (): Record<FlowLabel | 'execute', string> => ({ ...this.labels, execute: 'true' });
  private readonly refusedLabels = (): Record<FlowLabel | 'execute', string> => ({ ...this.labels, execute: 'false' });

  constructor(
    private readonly metrics: FlowControlMetrics,
    readonly labels: Readonly<Record<FlowLabel, string>>,
  ) {
    this.key = `${labels.priority_level}\0${labels.flow_schema}`;
    this.executedKey = `${this.key}\0true`;
    this.refusedKey = `${this.key}\0false`;
  }

  dispatched(waitedSeconds: number): void {
    this.metrics.dispatchedTotal.inc(this.key, this.labelsOf);
    this.metrics.wait.observe(this.executedKey, this.executedLabels, waitedSeconds);
  }

  rejected(reason: Rejection, waitedSeconds: number): void {
    this.metrics.rejectedTotal.inc({ ...this.labels, reason });
    this.metrics.wait.observe(this.refusedKey, this.refusedLabels, waitedSeconds);
  }
}

export class FlowControlMetrics {
  readonly dispatchedTotal: ScrapedCounter<FlowLabel>;
  readonly rejectedTotal: Counter<FlowLabel | 'reason'>;
  readonly wait: ScrapedHistogram<FlowLabel | 'execute'>;
  private readonly dropped: Counter<'request_kind'>;
  readonly nominalSeats: Gauge<'priority_level'>;
  /** By priority level, then flow schema: both are constants, so no key is built per request. */
  private readonly children = new Map<string, Map<string, FlowSeries>>();
  private readonly registry: Registry;

  constructor(registry: Registry) {
    this.registry = registry;
    const registers = [registry];
    const labelNames = ['priority_level', 'flow_schema'] as const;
    const all = (): IterableIterator<FlowSeries> => this.allSeries();
    this.dispatchedTotal = new ScrapedCounter({ name: 'apiserver_flowcontrol_dispatched_requests_total', help: 'Number of requests executed by API Priority and Fairness subsystem', labelNames, registers });
    this.rejectedTotal = new Counter({
      name: 'apiserver_flowcontrol_rejected_requests_total',
      help: 'Number of requests rejected by API Priority and Fairness subsystem',
      labelNames: [...labelNames, 'reason'],
      registers,
    });
    new Gauge({
      name: 'apiserver_flowcontrol_current_inqueue_requests',
      help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
      labelNames,
      registers,
      collect() {
        for (const s of all()) this.set(s.labels, s.inQueue);
      },
    });
    new Gauge({
      name: 'apiserver_flowcontrol_current_executing_requests',
      help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
      labelNames,
      registers,
      collect() {
        for (const s of all()) this.set(s.labels, s.executing);
      },
    });
    this.wait = new ScrapedHistogram({
      name: 'apiserver_flowcontrol_request_wait_duration_seconds',
      help: 'Length of time a request spent waiting in its queue',
      labelNames: [...labelNames, 'execute'],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.nominalSeats = new Gauge({ name: 'apiserver_flowcontrol_nominal_limit_seats', help: 'Nominal number of execution seats configured for each priority level', labelNames: ['priority_level'], registers });
    this.dropped = new Counter({ name: 'apiserver_dropped_requests_total', help: "Number of requests dropped with 'Try again later' response", labelNames: ['request_kind'], registers });
    this.dropped.inc({ request_kind: 'readOnly' }, 0);
    this.dropped.inc({ request_kind: 'mutating' }, 0);
  }

  /** Exposes the loop's smoothed delay and utilization. */
  watchLoop(loop: LoopSaturation): void {
    const registers = [this.registry];
    new Gauge({
      name: 'kube_identity_apiserver_event_loop_delay_seconds',
      help: 'Smoothed delay of the API server\'s event loop; workload requests are shed while it is at least --max-event-loop-delay and the loop is busy',
      registers,
      collect() {
        this.set(loop.delayMs / 1000);
      },
    });
    new Gauge({
      name: 'kube_identity_apiserver_event_loop_utilization',
      help: 'Smoothed share of the time the API server\'s event loop was busy',
      registers,
      collect() {
        this.set(loop.utilization);
      },
    });
  }

  droppedRequest(mutating: boolean): void {
    this.dropped.inc({ request_kind: mutating ? 'mutating' : 'readOnly' });
  }

  /** The series of one (priority level, flow schema), created at 0 on first use. */
  series(priorityLevel: string, flowSchema: string): FlowSeries {
    let schemas = this.children.get(priorityLevel);
    if (!schemas) this.children.set(priorityLevel, (schemas = new Map()));
    const known = schemas.get(flowSchema);
    if (known) return known;
    const s = new FlowSeries(this, Object.freeze({ priority_level: priorityLevel, flow_schema: flowSchema }));
    this.dispatchedTotal.zero(s.key, s.labelsOf);
    schemas.set(flowSchema, s);
    return s;
  }

  private *allSeries(): IterableIterator<FlowSeries> {
    for (const schemas of this.children.values()) yield* schemas.values();
  }
}
