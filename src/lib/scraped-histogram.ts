/**
 * A histogram whose observations on a hot path are a bucket search and three additions, for the
 * same reason as ScrapedCounter: prom-client's Histogram validates and hashes the labels and looks
 * the bucket up by an object key on every `observe` (3-4% of an API GET's CPU). Each series is
 * found by a key the caller builds. prom-client has no way to hand a Histogram counts in bulk, so
 * this is a metric of its own in the registry: a scrape formats it from `get()` exactly as
 * prom-client formats a Histogram (cumulative `_bucket` series with `le`, `+Inf`, `_sum`, `_count`).
 */
import type { LabelValues, Registry } from 'prom-client';

export interface ScrapedHistogramConfig<T extends string> {
  name: string;
  help: string;
  labelNames: readonly T[];
  /** Upper bounds, ascending. */
  buckets: readonly number[];
  registers: Registry[];
}

interface Series<T extends string> {
  labels: LabelValues<T>;
  /** Observations per bucket (not cumulative); the last slot is +Inf's. */
  counts: number[];
  sum: number;
  count: number;
}

/** One line of a scrape, in prom-client's shape: `labels` are the line's own, `sharedLabels` the series'. */
interface Value<T extends string> {
  metricName: string;
  labels: Record<string, string | number>;
  sharedLabels: LabelValues<T>;
  value: number;
}

export class ScrapedHistogram<T extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly T[];
  private readonly bounds: readonly number[];
  private series = new Map<string, Series<T>>();

  constructor(config: ScrapedHistogramConfig<T>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    this.bounds = config.buckets;
    for (const r of config.registers) r.registerMetric(this as never);
  }

  /** Records `value` in the series `key` names; `labels` gives its labels the first time the key is seen. */
  observe(key: string, labels: () => LabelValues<T>, value: number): void {
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels: labels(), counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 }));
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  /** Shows the series `key` names with no observations before its first, as prom-client's Histogram `zero` does. */
  zero(key: string, labels: () => LabelValues<T>): void {
    if (!this.series.has(key)) this.series.set(key, { labels: labels(), counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 });
  }

  /** What the registry formats: the series' labels apart, as prom-client's Histogram hands them. */
  getForPromString(): { name: string; help: string; type: 'histogram'; values: Value<T>[]; aggregator: 'sum' } {
    const values: Value<T>[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ metricName: bucket, labels: { le }, sharedLabels: s.labels, value: acc });
      });
      values.push({ metricName: bucket, labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: {}, sharedLabels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: {}, sharedLabels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same lines with each series' labels merged in (prom-client's `get()`, getMetricsAsJSON's). */
  get(): { name: string; help: string; type: 'histogram'; values: Omit<Value<T>, 'sharedLabels'>[]; aggregator: 'sum' } {
    const data = this.getForPromString();
    return { ...data, values: data.values.map((v) => ({ metricName: v.metricName, labels: { ...v.sharedLabels, ...v.labels }, value: v.value })) };
  }

  reset(): void {
    this.series = new Map();
  }
}
