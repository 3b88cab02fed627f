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
 * Children are looked up once per (level, schema): a labelled lookup hashes its labels every time.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LoopSaturation } from './loop-saturation.js';
import type { Rejection } from './priority-level.js';

/** Upstream's buckets for the queue wait. */
const WAIT_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];

export interface FlowSeries {
  dispatched(waitedSeconds: number): void;
  rejected(reason: Rejection, waitedSeconds: number): void;
  inQueue: { inc(): void; dec(): void };
  executing: { inc(): void; dec(): void };
}

export class FlowControlMetrics {
  private readonly dispatchedTotal: Counter<'priority_level' | 'flow_schema'>;
  private readonly rejectedTotal: Counter<'priority_level' | 'flow_schema' | 'reason'>;
  private readonly inQueue: Gauge<'priority_level' | 'flow_schema'>;
  private readonly executing: Gauge<'priority_level' | 'flow_schema'>;
  private readonly wait: Histogram<'priority_level' | 'flow_schema' | 'execute'>;
  private readonly dropped: Counter<'request_kind'>;
  readonly nominalSeats: Gauge<'priority_level'>;
  private readonly children = new Map<string, FlowSeries>();
  private readonly registry: Registry;

  constructor(registry: Registry) {
    this.registry = registry;
    const registers = [registry];
    const labelNames = ['priority_level', 'flow_schema'] as const;
    this.dispatchedTotal = new Counter({ name: 'apiserver_flowcontrol_dispatched_requests_total', help: 'Number of requests executed by API Priority and Fairness subsystem', labelNames, registers });
    this.rejectedTotal = new Counter({
      name: 'apiserver_flowcontrol_rejected_requests_total',
      help: 'Number of requests rejected by API Priority and Fairness subsystem',
      labelNames: [...labelNames, 'reason'],
      registers,
    });
    this.inQueue = new Gauge({ name: 'apiserver_flowcontrol_current_inqueue_requests', help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem', labelNames, registers });
    this.executing = new Gauge({ name: 'apiserver_flowcontrol_current_executing_requests', help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', labelNames, registers });
    this.wait = new Histogram({
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
    const key = `${priorityLevel}\0${flowSchema}`;
    let s = this.children.get(key);
    if (s) return s;
    const labels = { priority_level: priorityLevel, flow_schema: flowSchema };
    const dispatched = this.dispatchedTotal.labels(labels);
    const executed = this.wait.labels({ ...labels, execute: 'true' });
    const refused = this.wait.labels({ ...labels, execute: 'false' });
    const rejectedTotal = this.rejectedTotal;
    const inQueue = this.inQueue.labels(labels);
    const executing = this.executing.labels(labels);
    dispatched.inc(0);
    inQueue.set(0);
    executing.set(0);
    s = {
      dispatched(waited) {
        dispatched.inc();
        executed.observe(waited);
      },
      rejected(reason, waited) {
        rejectedTotal.inc({ ...labels, reason });
        refused.observe(waited);
      },
      inQueue,
      executing,
    };
    this.children.set(key, s);
    return s;
  }
}
