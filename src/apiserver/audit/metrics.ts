/**
 * kube-apiserver's audit metrics, same names and labels:
 * - apiserver_audit_event_total: events generated and sent to the backends
 * - apiserver_audit_error_total{plugin}: events a backend failed to write or dropped (log, webhook)
 * - apiserver_audit_level_total{level}: requests by the policy level they got
 * - apiserver_audit_requests_rejected_total: requests refused because the blocking-strict backend failed
 */
import { Counter, type Registry } from 'prom-client';

export class AuditMetrics {
  readonly events: Counter;
  readonly errors: Counter<'plugin'>;
  readonly levels: Counter<'level'>;
  readonly rejected: Counter;

  constructor(registry: Registry, plugins: readonly string[]) {
    const counter = <L extends string>(name: string, help: string, labelNames: L[] = []): Counter<L> =>
      (registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [registry] });
    this.events = counter('apiserver_audit_event_total', 'Counter of audit events generated and sent to the audit backend.');
    this.errors = counter('apiserver_audit_error_total', 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.', ['plugin']);
    this.levels = counter('apiserver_audit_level_total', 'Counter of policy levels for audit events (1 per request).', ['level']);
    this.rejected = counter('apiserver_audit_requests_rejected_total', 'Counter of apiserver requests rejected due to an error in audit logging backend.');
    // Each configured plugin's series exists from the start, so a first error shows in rate() and increase().
    for (const plugin of plugins) this.errors.inc({ plugin }, 0);
  }
}
