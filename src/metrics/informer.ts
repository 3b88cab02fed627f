/**
 * Informer health, under the project prefix (client-go has no stable equivalent):
 * - kube_identity_informer_last_watch_event_timestamp_seconds{informer}: last time a watch was
 *   established or delivered an event (a stale value means a silent watch)
 * - kube_identity_informer_relists_total{informer}: full LISTs (start, 410 Gone, expired continue)
 * - kube_identity_informer_watch_restarts_total{informer,reason}: reason is closed, error, expired, watchdog
 * - kube_identity_informer_synced{informer}: 1 once the first LIST filled the cache
 * - kube_identity_informer_objects{informer}: objects in the cache
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { once } from './registry.js';

export const WATCH_RESTART_REASONS = ['closed', 'error', 'expired', 'watchdog'] as const;
export type WatchRestartReason = (typeof WATCH_RESTART_REASONS)[number];

/** What an informer's gauges read when the registry is scraped. */
export interface InformerGauges {
  objects(): number;
  /** Clock time (ms) of the last watch connection or event; undefined before the first. */
  lastWatchEventMs(): number | undefined;
}

export class InformerMetrics {
  readonly relists: Counter<'informer'>;
  readonly watchRestarts: Counter<'informer' | 'reason'>;
  readonly synced: Gauge<'informer'>;

  private readonly sources = new Map<string, InformerGauges>();

  private constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ['informer'] as const;
    const sources = this.sources;
    new Gauge({
      name: 'kube_identity_informer_last_watch_event_timestamp_seconds',
      help: 'Unix time of the last watch connection or event per informer',
      labelNames,
      registers,
      collect() {
        for (const [informer, s] of sources) {
          const ms = s.lastWatchEventMs();
          if (ms !== undefined) this.set({ informer }, ms / 1000);
        }
      },
    });
    this.relists = new Counter({ name: 'kube_identity_informer_relists_total', help: 'Full lists per informer', labelNames, registers });
    this.watchRestarts = new Counter({
      name: 'kube_identity_informer_watch_restarts_total',
      help: 'Watch restarts per informer and reason',
      labelNames: ['informer', 'reason'],
      registers,
    });
    this.synced = new Gauge({ name: 'kube_identity_informer_synced', help: '1 once the informer cache has synced', labelNames, registers });
    new Gauge({
      name: 'kube_identity_informer_objects',
      help: 'Objects in the informer cache',
      labelNames,
      registers,
      collect() {
        for (const [informer, s] of sources) this.set({ informer }, s.objects());
      },
    });
  }

  /**
   * Zeroes an informer's counters, as controller-runtime zeroes its own (rate() cannot see a first
   * increase from nothing), and reads its gauges from `gauges` at every scrape.
   */
  initInformer(informer: string, gauges: InformerGauges): void {
    this.sources.set(informer, gauges);
    this.relists.inc({ informer }, 0);
    for (const reason of WATCH_RESTART_REASONS) this.watchRestarts.inc({ informer, reason }, 0);
  }

  static for(registry: Registry): InformerMetrics {
    return once(registry, 'informer', () => new InformerMetrics(registry));
  }
}
