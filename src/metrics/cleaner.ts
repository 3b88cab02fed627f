/**
 * The PodCertificateRequest cleaner (src/controller/cleaner/pcr-cleaner.ts):
 * - kube_identity_pcr_cleaner_deletions_total{result}: requests the cleaner tried to delete, by
 *   outcome: `deleted`, `gone` (already deleted by someone else), `conflict` (re-created under the
 *   same name since cached; judged again next pass) or `error`. A growing `error` count usually
 *   means the controller lost its `delete` grant on podcertificaterequests.
 */
import { Counter, type Registry } from 'prom-client';
import { once } from './registry.js';

export type PcrCleanerResult = 'deleted' | 'gone' | 'conflict' | 'error';

export class PcrCleanerMetrics {
  readonly deletions: Counter<'result'>;

  private constructor(registry: Registry) {
    this.deletions = new Counter({
      name: 'kube_identity_pcr_cleaner_deletions_total',
      help: 'PodCertificateRequests the cleaner tried to delete, by result',
      labelNames: ['result'],
      registers: [registry],
    });
  }

  static for(registry: Registry): PcrCleanerMetrics {
    return once(registry, 'pcr-cleaner', () => new PcrCleanerMetrics(registry));
  }
}
