/**
 * The controller's event broadcaster (src/controller/events):
 * - kube_identity_events_recorded_total{type,reason}: occurrences recorded by the controllers;
 * - kube_identity_event_writes_total{operation,result}: Event writes (create or update of a series)
 *   and whether the API server accepted them;
 * - kube_identity_events_dropped_total: writes dropped because the queue was full (the Events API
 *   is slow or down: the broadcaster drops rather than block a controller);
 * - kube_identity_event_queue_depth: writes waiting or in flight (rising: the Events API is slow).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { ScrapedCounter } from '../lib/scraped-counter.js';
import { once } from './registry.js';

export class EventMetrics {
  /** Counted for every occurrence (a CSR's approval and issuance each): no label hashing per increment. */
  private readonly recorded: ScrapedCounter<'type' | 'reason'>;
  readonly writes: Counter<'operation' | 'result'>;
  readonly dropped: Counter;
  private readonly depthSources: (() => number)[] = [];

  private constructor(registry: Registry) {
    const registers = [registry];
    this.recorded = new ScrapedCounter({ name: 'kube_identity_events_recorded_total', help: 'Event occurrences recorded, by type and reason', labelNames: ['type', 'reason'], registers });
    this.writes = new Counter({ name: 'kube_identity_event_writes_total', help: 'Event writes to the API server, by operation and result', labelNames: ['operation', 'result'], registers });
    this.dropped = new Counter({ name: 'kube_identity_events_dropped_total', help: 'Event writes dropped because the write queue was full', registers });
    const sources = this.depthSources;
    new Gauge({
      name: 'kube_identity_event_queue_depth',
      help: 'Event writes waiting or in flight',
      registers,
      collect() {
        this.set(sources.reduce((sum, depth) => sum + depth(), 0));
      },
    });
  }

  /** One occurrence recorded. */
  record(type: string, reason: string): void {
    this.recorded.inc(`${type} ${reason}`, () => ({ type, reason }));
  }

  /** Registers a broadcaster's queue, read on scrape. */
  addQueueDepthSource(depth: () => number): void {
    this.depthSources.push(depth);
  }

  static for(registry: Registry): EventMetrics {
    return once(registry, 'events', () => new EventMetrics(registry));
  }
}
