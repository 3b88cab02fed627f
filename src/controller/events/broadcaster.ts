/**
 * The controllers' event broadcaster, in the manner of client-go's: recording is synchronous and
 * costs a map lookup, never a request in a reconcile's path; the correlator folds repeats into
 * series and similar events into a combined one; a single writer sends the rest through a bounded
 * queue, dropping (and counting) rather than blocking when the Events API is slow or down; a
 * series' growing count reaches the server at most once per `updateIntervalMs`.
 * Events are core/v1 with the events.k8s.io/v1 fields (eventTime, action, reporting component and
 * instance, series), so `kubectl get events` shows them with their counts. Events about
 * cluster-scoped objects (CSRs) go to the `default` namespace, as upstream's do.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { KObject } from '../../api/meta.js';
import { sleep, type Clock } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import { EventMetrics } from '../../metrics/events.js';
import type { KubeClient } from '../client/kube-client.js';
import { isConflict } from '../../lib/api-errors.js';
import type { Runnable } from '../runtime/manager.js';
import { EventCorrelator, objectRef, type CorrelatorOptions, type EventType, type ObjectRef, type Occurrence, type Series } from './correlator.js';

/** A core/v1 Event as JSON, as this broadcaster writes it. */
export interface EventJSON {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string };
  involvedObject: ObjectRef;
  type: EventType;
  reason: string;
  message: string;
  action: string;
  eventTime: string;
  reportingComponent: string;
  reportingInstance: string;
  source: { component: string };
  series?: { count: number; lastObservedTime: string };
}

/** Where Events go: the API server (apiSink) or, in tests, anything slow or failing. */
export interface EventSink {
  create(namespace: string, event: EventJSON): Promise<void>;
  /** Replaces the Event of that name (Events are created on update, so a vanished one comes back). */
  update(namespace: string, name: string, event: EventJSON): Promise<void>;
}

const eventsPath = (namespace: string): string => `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;

export function apiSink(client: Pick<KubeClient, 'write'>): EventSink {
  return {
    create: (ns, ev) => client.write('POST', eventsPath(ns), ev),
    update: (ns, name, ev) => client.write('PUT', `${eventsPath(ns)}/${encodeURIComponent(name)}`, ev),
  };
}

/** What a controller is given: records return at once and never throw. */
export interface EventRecorder {
  event(obj: KObject, type: EventType, reason: string, action: string, note: string): void;
}

export interface EventBroadcasterOptions extends CorrelatorOptions {
  sink: EventSink;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  /** reportingInstance of every Event (default: the host name, the pod's name in a Deployment). */
  instance?: string;
  /** Writes that may wait (client-go's broadcaster queue: 1000); beyond it they are dropped. */
  queueSize?: number;
  /** How often a growing series' count is written (default 10 s). */
  updateIntervalMs?: number;
  /** How long shutdown waits for queued writes (default 5 s). */
  drainTimeoutMs?: number;
}

/** A series' Event is given up after this many failed writes (its next occurrence starts again). */
const MAX_TRIES = 3;

/** The writer's bookkeeping of a series, beside what the correlator counts. */
interface WriteState {
  writtenAt: number;
  failures: number;
}

const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

export class EventBroadcaster implements Runnable {
  readonly name = 'event-broadcaster';
  readonly needLeaderElection = false;
  private readonly correlator: EventCorrelator;
  private readonly metrics: EventMetrics;
  private readonly logger: Logger;
  private readonly instance: string;
  private readonly queue: Series[] = [];
  private readonly queued = new Set<Series>();
  private readonly state = new WeakMap<Series, WriteState>();
  private writing: Promise<void> | undefined;
  /** The series being written now. */
  private current: Series | undefined;
  private failing = false;
  /** Event name suffix: from a random start, then counting, so names within a millisecond differ. */
  private suffix = randomBytes(2).readUInt16BE(0);

  constructor(private readonly o: EventBroadcasterOptions) {
    this.correlator = new EventCorrelator(o);
    this.metrics = EventMetrics.for(o.registry);
    this.metrics.addQueueDepthSource(() => this.queue.length + (this.current ? 1 : 0));
    this.logger = o.logger.child({ component: 'events' });
    this.instance = o.instance ?? hostname();
  }

  recorder(component: string): EventRecorder {
    return { event: (obj, type, reason, action, note) => this.record({ component, regarding: objectRef(obj), type, reason, action, note }) };
  }

  /** Writes the series counts the server has not seen, every updateIntervalMs; drains on shutdown. */
  async start(signal: AbortSignal): Promise<void> {
    const interval = this.o.updateIntervalMs ?? 10_000;
    while (!signal.aborted) {
      await sleep(this.o.clock, interval, signal);
      this.enqueuePending();
    }
    await Promise.race([this.flush(), sleep(this.o.clock, this.o.drainTimeoutMs ?? 5000)]);
  }

  /** Queues everything unwritten and resolves once it was written (or failed). */
  async flush(): Promise<void> {
    // Twice: a series that grew while its write was in flight is pending again afterwards.
    for (let pass = 0; pass < 2; pass++) {
      this.enqueuePending();
      while (this.writing) await this.writing;
    }
  }

  private record(o: Occurrence): void {
    this.metrics.record(o.type, o.reason);
    const now = this.o.clock.now();
    const s = this.correlator.observe(o, now);
    const st = this.state.get(s);
    // A new Event is written at once; a repeat only when the last write is old enough (else on the next tick).
    if (!st || (s.writtenCount > 0 && now - st.writtenAt >= (this.o.updateIntervalMs ?? 10_000))) this.enqueue(s);
  }

  /** Queues the series with unwritten occurrences, except the one in flight (its next turn comes after). */
  private enqueuePending(): void {
    for (const s of this.correlator.pending(this.o.clock.now())) if (s !== this.current) this.enqueue(s);
  }

  private enqueue(s: Series): void {
    if (this.queued.has(s)) return;
    if (!this.state.has(s)) this.state.set(s, { writtenAt: 0, failures: 0 });
    if (this.queue.length >= (this.o.queueSize ?? 1000)) {
      this.metrics.dropped.inc();
      // An Event never created is forgotten, so a later occurrence is a new one; a series waits for the next tick.
      if (s.writtenCount === 0) this.correlator.forget(s);
      return;
    }
    this.queue.push(s);
    this.queued.add(s);
    this.pump();
  }

  private pump(): void {
    if (this.writing) return;
    this.writing = (async () => {
      for (let s = this.queue.shift(); s; s = this.queue.shift()) {
        this.queued.delete(s);
        this.current = s;
        await this.write(s);
        this.current = undefined;
      }
    })().finally(() => {
      this.writing = undefined;
      if (this.queue.length > 0) this.pump();
    });
  }

  private async write(s: Series): Promise<void> {
    const st = this.state.get(s) ?? { writtenAt: 0, failures: 0 };
    const count = s.count;
    const create = s.writtenCount === 0;
    const now = this.o.clock.now();
    s.name ??= this.nameFor(s.occurrence.regarding, now);
    const body = this.body(s, s.name);
    const operation = create ? 'create' : 'update';
    try {
      if (create) await this.o.sink.create(body.metadata.namespace, body);
      else await this.o.sink.update(body.metadata.namespace, s.name, body);
    } catch (err) {
      // A create that timed out yet reached the server: the name is ours, so the Event exists.
      if (!(create && isConflict(err))) return this.failed(s, st, operation, err);
    }
    s.writtenCount = Math.max(s.writtenCount, count);
    st.writtenAt = now;
    st.failures = 0;
    this.metrics.writes.inc({ operation, result: 'success' });
    if (this.failing) this.logger.info('events are written again');
    this.failing = false;
  }

  private failed(s: Series, st: WriteState, operation: string, err: unknown): void {
    this.metrics.writes.inc({ operation, result: 'error' });
    // One warning when writes start failing, not one per Event (the API may be down for a while).
    if (!this.failing) this.logger.warn({ err, reason: s.occurrence.reason }, 'unable to write event, will retry');
    else this.logger.debug({ err, reason: s.occurrence.reason }, 'unable to write event');
    this.failing = true;
    if (++st.failures >= MAX_TRIES) this.correlator.forget(s);
  }

  private body(s: Series, name: string): EventJSON {
    const o = s.occurrence;
    const event: EventJSON = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: o.regarding.namespace || 'default' },
      involvedObject: o.regarding,
      type: o.type,
      reason: o.reason,
      message: o.note,
      action: o.action,
      eventTime: microTime(s.firstAt),
      reportingComponent: o.component,
      reportingInstance: this.instance,
      source: { component: o.component },
    };
    if (s.count > 1) event.series = { count: s.count, lastObservedTime: microTime(s.lastAt) };
    return event;
  }

  /** `<object>.<ms in hex><4 hex digits>`, as client-go names Events (`<object>.<ns in hex>`). */
  private nameFor(r: ObjectRef, now: number): string {
    this.suffix = (this.suffix + 1) & 0xffff;
    return `${r.name || (r.kind ?? 'object').toLowerCase()}.${now.toString(16)}${this.suffix.toString(16).padStart(4, '0')}`;
  }
}
