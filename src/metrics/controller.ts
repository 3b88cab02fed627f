/**
 * controller-runtime's reconcile metrics, same names and label sets:
 * - controller_runtime_reconcile_total{controller,result}: result is success, error, requeue, requeue_after
 * - controller_runtime_reconcile_errors_total{controller}
 * - controller_runtime_terminal_reconcile_errors_total{controller}
 * - controller_runtime_reconcile_time_seconds{controller}
 * - controller_runtime_active_workers{controller}
 * - controller_runtime_max_concurrent_reconciles{controller}
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { ScrapedCounter } from '../lib/scraped-counter.js';
import { ScrapedHistogram } from '../lib/scraped-histogram.js';
import { once } from './registry.js';

const RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
export type ReconcileResultLabel = (typeof RESULTS)[number];

/**
 * Every reconcile records here: its result and time are plain additions handed to prom-client when
 * scraped (ScrapedCounter, ScrapedHistogram), and the busy workers are read from the runner then.
 */
export class ControllerMetrics {
  private readonly total: ScrapedCounter<'controller' | 'result'>;
  readonly errors: Counter<'controller'>;
  readonly terminalErrors: Counter<'controller'>;
  private readonly time: ScrapedHistogram<'controller'>;
  readonly maxConcurrent: Gauge<'controller'>;
  private readonly activeWorkers = new Map<string, () => number>();

  private constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ['controller'] as const;
    const active = this.activeWorkers;
    this.total = new ScrapedCounter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.errors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames, registers });
    this.terminalErrors = new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames,
      registers,
    });
    this.time = new ScrapedHistogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60],
      registers,
    });
    new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames,
      registers,
      collect() {
        for (const [controller, busy] of active) this.set({ controller }, busy());
      },
    });
    this.maxConcurrent = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames,
      registers,
    });
  }

  static for(registry: Registry): ControllerMetrics {
    return once(registry, 'controller', () => new ControllerMetrics(registry));
  }

  /**
   * Zero every series of a controller so dashboards show it before its first reconcile;
   * `activeWorkers` is read at every scrape.
   */
  init(controller: string, workers: number, activeWorkers: () => number): void {
    for (const result of RESULTS) this.total.zero(`${controller} ${result}`, () => ({ controller, result }));
    this.errors.inc({ controller }, 0);
    this.terminalErrors.inc({ controller }, 0);
    this.activeWorkers.set(controller, activeWorkers);
    this.maxConcurrent.set({ controller }, workers);
  }

  /** One reconcile's outcome. */
  reconciled(controller: string, result: ReconcileResultLabel): void {
    this.total.inc(`${controller} ${result}`, () => ({ controller, result }));
  }

  /** One reconcile's duration, whatever its outcome. */
  timed(controller: string, seconds: number): void {
    this.time.observe(controller, () => ({ controller }), seconds);
  }
}
