/**
 * The workload signer's decision metrics, in the CSR family's shape (csr.ts) with `pcr` in place of `csr`:
 * - kube_identity_pcr_issuances_total{signer}: certificate chains written to PodCertificateRequests;
 * - kube_identity_pcr_denials_total{signer,reason}: Denied conditions (UnsupportedKeyType);
 * - kube_identity_pcr_failures_total{signer,reason}: Failed conditions (the signer could not sign);
 * - kube_identity_pcr_issuance_latency_seconds{signer}: creationTimestamp → chain written.
 * The CA's expiry is kube_identity_signer_ca_expiry_timestamp_seconds, as for every signer.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { once } from './registry.js';

export class PodCertificateMetrics {
  readonly issuances: Counter<'signer'>;
  readonly denials: Counter<'signer' | 'reason'>;
  readonly failures: Counter<'signer' | 'reason'>;
  readonly issuanceLatency: Histogram<'signer'>;

  private constructor(registry: Registry) {
    const registers = [registry];
    this.issuances = new Counter({ name: 'kube_identity_pcr_issuances_total', help: 'Pod certificates issued, by signer', labelNames: ['signer'], registers });
    this.denials = new Counter({ name: 'kube_identity_pcr_denials_total', help: 'PodCertificateRequests denied, by signer and reason', labelNames: ['signer', 'reason'], registers });
    this.failures = new Counter({ name: 'kube_identity_pcr_failures_total', help: 'PodCertificateRequests marked Failed, by signer and reason', labelNames: ['signer', 'reason'], registers });
    this.issuanceLatency = new Histogram({
      name: 'kube_identity_pcr_issuance_latency_seconds',
      help: 'Time from PodCertificateRequest creation to its certificate chain being written',
      labelNames: ['signer'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
  }

  static for(registry: Registry): PodCertificateMetrics {
    return once(registry, 'pod-certificates', () => new PodCertificateMetrics(registry));
  }

  /** Zeroes a signer's series at start, so its first issuance, denial or failure shows in rate(). */
  initSigner(signer: string, denialReasons: readonly string[], failureReasons: readonly string[]): void {
    this.issuances.inc({ signer }, 0);
    this.issuanceLatency.zero({ signer });
    for (const reason of denialReasons) this.denials.inc({ signer, reason }, 0);
    for (const reason of failureReasons) this.failures.inc({ signer, reason }, 0);
  }
}
