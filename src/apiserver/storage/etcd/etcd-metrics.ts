/**
 * kube-apiserver's etcd request metrics, same names, labels and buckets: every store call to etcd
 * by operation (get, list, listWithCount, create, update, delete) and type, the resource it is about as upstream's
 * group-resource string (`configmaps`, `certificatesigningrequests.certificates.k8s.io`).
 * - etcd_request_duration_seconds{operation,type}
 * - etcd_requests_total{operation,type}, etcd_request_errors_total{operation,type}
 * A key outside `/registry/<group>/<plural>/` is counted with an empty type.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

const BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
const LABELS = ['operation', 'type'] as const;

export type EtcdOperation = 'get' | 'list' | 'listWithCount' | 'create' | 'update' | 'delete';

/** The group-resource of a Store key or prefix: `/registry/core/configmaps/...` is `configmaps`. */
export function typeOf(key: string): string {
  const [, registry, group, plural] = key.split('/');
  if (registry !== 'registry' || !group || !plural) return '';
  return group === 'core' ? plural : `${plural}.${group}`;
}

export class EtcdMetrics {
  private readonly duration: Histogram<(typeof LABELS)[number]>;
  private readonly total: Counter<(typeof LABELS)[number]>;
  private readonly errors: Counter<(typeof LABELS)[number]>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({ name: 'etcd_request_duration_seconds', help: 'Etcd request latency in seconds for each operation and object type.', labelNames: LABELS, buckets: BUCKETS, registers });
    this.total = new Counter({ name: 'etcd_requests_total', help: 'Etcd request counts for each operation and object type.', labelNames: LABELS, registers });
    this.errors = new Counter({ name: 'etcd_request_errors_total', help: 'Etcd failed request counts for each operation and object type.', labelNames: LABELS, registers });
  }

  /** Runs `call`, recording its duration and whether it failed, as upstream's RecordEtcdRequest. */
  async measure<T>(operation: EtcdOperation, key: string, call: () => Promise<T>): Promise<T> {
    const labels = { operation, type: typeOf(key) };
    const start = performance.now();
    try {
      return await call();
    } catch (err) {
      this.errors.inc(labels);
      throw err;
    } finally {
      this.duration.observe(labels, (performance.now() - start) / 1000);
      this.total.inc(labels);
    }
  }
}
