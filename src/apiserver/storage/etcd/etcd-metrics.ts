/**
 * kube-apiserver's etcd request metrics, same names, labels and buckets: every store call to etcd
 * by operation (get, list, listWithCount, create, update, delete) and type, the resource it is about as upstream's
 * group-resource string (`configmaps`, `certificatesigningrequests.certificates.k8s.io`).
 * - etcd_request_duration_seconds{operation,type}
 * - etcd_requests_total{operation,type}, etcd_request_errors_total{operation,type}
 * A key outside `/registry/<group>/<plural>/` is counted with an empty type.
 *
 * Every call is timed and counted, so the duration and the total count in plain numbers handed to
 * prom-client when scraped (lib/scraped-*.ts): prom-client validates and hashes the labels on every
 * observe and inc, about 2% of the etcd API server's CPU per CSR. Errors are rare and counted directly.
 */
import { Counter, type Registry } from 'prom-client';
import { ScrapedCounter } from '../../../lib/scraped-counter.js';
import { ScrapedHistogram } from '../../../lib/scraped-histogram.js';

const BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
const LABELS = ['operation', 'type'] as const;
const REGISTRY = '/registry/';

type Label = (typeof LABELS)[number];
export type EtcdOperation = 'get' | 'list' | 'listWithCount' | 'create' | 'update' | 'delete';

/** The group-resource of a Store key or prefix: `/registry/core/configmaps/...` is `configmaps`. */
export function typeOf(key: string): string {
  if (!key.startsWith(REGISTRY)) return '';
  const slash = key.indexOf('/', REGISTRY.length);
  if (slash <= REGISTRY.length) return '';
  const end = key.indexOf('/', slash + 1);
  const plural = end < 0 ? key.slice(slash + 1) : key.slice(slash + 1, end);
  if (!plural) return '';
  const group = key.slice(REGISTRY.length, slash);
  return group === 'core' ? plural : `${plural}.${group}`;
}

/** One (operation, type): its key and labels, made once. */
interface Series {
  key: string;
  labels: () => Record<Label, string>;
}

export class EtcdMetrics {
  private readonly duration: ScrapedHistogram<Label>;
  private readonly total: ScrapedCounter<Label>;
  private readonly errors: Counter<Label>;
  /** By operation, then type. */
  private readonly series = new Map<EtcdOperation, Map<string, Series>>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new ScrapedHistogram({ name: 'etcd_request_duration_seconds', help: 'Etcd request latency in seconds for each operation and object type.', labelNames: LABELS, buckets: BUCKETS, registers });
    this.total = new ScrapedCounter({ name: 'etcd_requests_total', help: 'Etcd request counts for each operation and object type.', labelNames: LABELS, registers });
    this.errors = new Counter({ name: 'etcd_request_errors_total', help: 'Etcd failed request counts for each operation and object type.', labelNames: LABELS, registers });
  }

  /** Runs `call`, recording its duration and whether it failed, as upstream's RecordEtcdRequest. */
  measure<T>(operation: EtcdOperation, key: string, call: () => Promise<T>): Promise<T> {
    const series = this.seriesOf(operation, typeOf(key));
    const start = performance.now();
    const done = (): void => {
      this.duration.observe(series.key, series.labels, (performance.now() - start) / 1000);
      this.total.inc(series.key, series.labels);
    };
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (err) {
      pending = Promise.reject(err as Error);
    }
    return pending.then(
      (value) => {
        done();
        return value;
      },
      (err: unknown) => {
        this.errors.inc(series.labels());
        done();
        throw err;
      },
    );
  }

  private seriesOf(operation: EtcdOperation, type: string): Series {
    let byType = this.series.get(operation);
    if (!byType) this.series.set(operation, (byType = new Map()));
    let s = byType.get(type);
    if (!s) {
      const labels = Object.freeze({ operation, type });
      byType.set(type, (s = { key: `${operation}\0${type}`, labels: () => labels }));
    }
    return s;
  }
}
