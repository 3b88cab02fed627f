/**
 * The CSR controllers' decision metrics (the observability peers lack, peers.md §11.5):
 * - kube_identity_csr_approvals_total{signer,reason}: approvals written by the approver;
 * - kube_identity_csr_denials_total{signer,reason}: denials (the kubelet approver never denies; kept
 *   so dashboards have the series and policy approvers can share it);
 * - kube_identity_csr_issuances_total{signer}: certificates written to status.certificate;
 * - kube_identity_csr_failures_total{signer,reason}: Failed conditions written by a signer;
 * - kube_identity_csr_issuance_latency_seconds{signer}: creationTimestamp → certificate written;
 * - kube_identity_csr_oldest_pending_age_seconds{signer}: age of the oldest CSR without a certificate
 *   and without a Denied/Failed condition, computed on scrape from the informer cache (0 for a signer
 *   this controller serves with nothing pending);
 * - kube_identity_signer_ca_expiry_timestamp_seconds{signer}: NotAfter of each signer's current CA;
 * - kube_identity_csr_policy_violations_total{signer,rule}: CSRs a policy approver refused, by the rule broken
 *   (counted once per CSR and rule, dry runs included);
 * - kube_identity_csr_dry_run_decisions_total{signer,decision,reason}: what a dry-run approver would have done.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { ScrapedCounter } from '../lib/scraped-counter.js';
import { ScrapedHistogram } from '../lib/scraped-histogram.js';
import { once } from './registry.js';

/** Supplies, on scrape, the oldest pending creation time (ms) per signer. */
export type OldestPendingSource = () => Map<string, number>;

export class CsrMetrics {
  /** Counted once per CSR (ScrapedCounter, ScrapedHistogram: no label hashing per increment); see `approved`, `issued`. */
  private readonly approvals: ScrapedCounter<'signer' | 'reason'>;
  readonly denials: Counter<'signer' | 'reason'>;
  private readonly issuances: ScrapedCounter<'signer'>;
  readonly failures: Counter<'signer' | 'reason'>;
  private readonly issuanceLatency: ScrapedHistogram<'signer'>;
  readonly caExpiry: Gauge<'signer'>;
  readonly policyViolations: Counter<'signer' | 'rule'>;
  readonly dryRunDecisions: Counter<'signer' | 'decision' | 'reason'>;
  private readonly sources: { source: OldestPendingSource; now: () => number }[] = [];
  /** Signers this controller approves or signs for: each has an oldest-pending series, 0 when none waits. */
  private readonly signers = new Set<string>();

  private constructor(registry: Registry) {
    const registers = [registry];
    this.approvals = new ScrapedCounter({ name: 'kube_identity_csr_approvals_total', help: 'CSRs approved, by signer and reason', labelNames: ['signer', 'reason'], registers });
    this.denials = new Counter({ name: 'kube_identity_csr_denials_total', help: 'CSRs denied, by signer and reason', labelNames: ['signer', 'reason'], registers });
    this.issuances = new ScrapedCounter({ name: 'kube_identity_csr_issuances_total', help: 'Certificates issued, by signer', labelNames: ['signer'], registers });
    this.failures = new Counter({ name: 'kube_identity_csr_failures_total', help: 'CSRs marked Failed, by signer and reason', labelNames: ['signer', 'reason'], registers });
    this.issuanceLatency = new ScrapedHistogram({
      name: 'kube_identity_csr_issuance_latency_seconds',
      help: 'Time from CSR creation to its certificate being written',
      labelNames: ['signer'],
      // From milliseconds (an auto-approved CSR is issued in a few) to a day (one waiting for a human).
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
      registers,
    });
    this.caExpiry = new Gauge({ name: 'kube_identity_signer_ca_expiry_timestamp_seconds', help: 'NotAfter of the current CA certificate of each signer', labelNames: ['signer'], registers });
    this.policyViolations = new Counter({
      name: 'kube_identity_csr_policy_violations_total',
      help: 'CSRs refused by an approval policy, by signer and the rule they broke',
      labelNames: ['signer', 'rule'],
      registers,
    });
    this.dryRunDecisions = new Counter({
      name: 'kube_identity_csr_dry_run_decisions_total',
      help: 'Decisions a dry-run approver recorded without writing them, by signer, decision and reason',
      labelNames: ['signer', 'decision', 'reason'],
      registers,
    });
    const { sources, signers } = this;
    new Gauge({
      name: 'kube_identity_csr_oldest_pending_age_seconds',
      help: 'Age of the oldest pending CSR (no certificate, not denied or failed), by signer',
      labelNames: ['signer'],
      registers,
      collect() {
        this.reset();
        for (const signer of signers) this.set({ signer }, 0);
        for (const { source, now } of sources) {
          for (const [signer, created] of source()) this.set({ signer }, Math.max(0, (now() - created) / 1000));
        }
      },
    });
  }

  static for(registry: Registry): CsrMetrics {
    return once(registry, 'csr', () => new CsrMetrics(registry));
  }

  /**
   * Zeroes a signer's series, as controller-runtime zeroes its own at start: a counter first seen at 1
   * has no increase for rate() or increase() to find, so its first issuance or failure went unseen.
   */
  initSigner(signer: string, failureReasons: readonly string[]): void {
    this.signers.add(signer);
    this.issuances.zero(signer, () => ({ signer }));
    this.issuanceLatency.zero(signer, () => ({ signer }));
    for (const reason of failureReasons) this.failures.inc({ signer, reason }, 0);
  }

  /** Zeroes an approver's approval series, for the same reason. */
  initApprovals(signer: string, reasons: readonly string[]): void {
    this.signers.add(signer);
    for (const reason of reasons) this.approvals.zero(`${signer} ${reason}`, () => ({ signer, reason }));
  }

  /** One approval written for `signer`, by the recognizer or policy `reason`. */
  approved(signer: string, reason: string): void {
    this.approvals.inc(`${signer} ${reason}`, () => ({ signer, reason }));
  }

  /** One certificate written by `signer`, `latencySeconds` after its CSR was created (when known). */
  issued(signer: string, latencySeconds?: number): void {
    this.issuances.inc(signer, () => ({ signer }));
    if (latencySeconds !== undefined) this.issuanceLatency.observe(signer, () => ({ signer }), latencySeconds);
  }

  /** Zeroes a policy approver's refusal series: one per rule it checks, one denial per rule it may deny on. */
  initPolicy(signer: string, rules: readonly string[], denialReasons: readonly string[]): void {
    this.signers.add(signer);
    for (const rule of rules) this.policyViolations.inc({ signer, rule }, 0);
    for (const reason of denialReasons) this.denials.inc({ signer, reason }, 0);
  }

  /** Registers where the oldest-pending gauge reads from (the CSR informer cache). */
  addOldestPendingSource(source: OldestPendingSource, now: () => number): void {
    this.sources.push({ source, now });
  }
}
