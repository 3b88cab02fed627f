/**
 * The kubelet serving-certificate approver (opt-in, `--approve-kubelet-serving`): the CSRs
 * kube-controller-manager never approves. Each pending `kubernetes.io/kubelet-serving` CSR is
 * judged by serving-policy.ts on the informer's copy and decided with that copy's resourceVersion,
 * so a stale copy costs a 409 and a retry, never a wrong write. Outcomes: approved; refused (left
 * pending with a Warning Event and a violation metric, or Denied with `--kubelet-serving-deny`);
 * waiting for the requester's Node. A dry run records every decision and writes nothing.
 */
import { CONDITION_APPROVED, CONDITION_DENIED, SIGNER_KUBELET_SERVING, type CertificateSigningRequest, type CertificateSigningRequestCondition } from '../../api/certificates.js';
import type { Node } from '../../api/nodes.js';
import { BoundedMap } from '../../lib/bounded-map.js';
import type { ReadonlyCache } from '../informer/cache.js';
import { wrapError } from '../client/errors.js';
import type { ReconcileContext, Reconciler, Result } from '../runtime/reconcile.js';
import type { CsrReconcilerDeps } from '../csr/csr-deps.js';
import type { ParsedRequests } from '../csr/parsed-requests.js';
import type { ApiserverAddresses } from './apiserver-addresses.js';
import { checkDnsResolution, type ResolveHost } from './serving-dns.js';
import { servingSkips, type PendingServing } from './serving-pending.js';
import { DENIABLE_RULES, NODE_ADDRESS_INDEX, SERVING_RULES, evaluateServingCsr, type ServingPolicyOptions, type ServingVerdict } from './serving-policy.js';

export const SERVING_APPROVER_NAME = 'csrapproving-kubelet-serving';
export const SERVING_APPROVED_REASON = 'AutoApproved';
export const SERVING_APPROVED_MESSAGE = 'Auto approving kubelet serving certificate after policy check.';
/** The approvals metric's reason for this approver. */
export const SERVING_METRIC_REASON = 'kubelet-serving-policy';
export const POLICY_VIOLATION_REASON = 'PolicyViolation';

export interface ServingApproverOptions extends CsrReconcilerDeps {
  nodes: ReadonlyCache<Node>;
  pending: PendingServing;
  policy: ServingPolicyOptions;
  dryRun: boolean;
  deny: boolean;
  /** The `kubernetes` Service's and Endpoints' addresses. */
  apiserver: Pick<ApiserverAddresses, 'current'>;
  /** Resolves DNS SANs; absent with --kubelet-serving-bypass-dns-resolution. */
  resolveHost?: ResolveHost;
}

/** Marks `key` as reported; false when it already was (metrics and Events count each refusal once). */
function firstReport(reported: BoundedMap<string, true>, key: string): boolean {
  if (reported.has(key)) return false;
  reported.set(key, true);
  return true;
}

type Refusal = Extract<ServingVerdict, { decision: 'refuse' }>;

export class ServingApproverReconciler implements Reconciler {
  /** What was already reported about a CSR, bounded: the oldest entries are forgotten first. */
  private readonly reported = new BoundedMap<string, true>(4096);

  constructor(private readonly o: ServingApproverOptions) {
    if (!o.dryRun) o.metrics.initApprovals(SIGNER_KUBELET_SERVING, [SERVING_METRIC_REASON]);
    // A dry run writes no denial; without --kubelet-serving-deny the denial series stay at 0, which is what happened.
    o.metrics.initPolicy(SIGNER_KUBELET_SERVING, SERVING_RULES, o.dryRun ? [] : [...DENIABLE_RULES]);
  }

  async reconcile(key: string, ctx: ReconcileContext): Promise<Result> {
    const csr = this.o.csrs.get(key);
    if (!csr) {
      this.o.pending.forget(key);
      return 'done';
    }
    this.o.pending.observe(key, csr);
    if (servingSkips(csr)) return 'done';
    const verdict = await this.judge(key, csr);
    if (verdict.decision === 'approve') await this.approve(csr, ctx);
    else if (verdict.decision === 'refuse') await this.refuse(csr, verdict, ctx);
    else this.wait(csr, verdict.message, ctx);
    return 'done';
  }

  private async judge(key: string, csr: CertificateSigningRequest): Promise<ServingVerdict> {
    const flooded = `${csr.metadata?.uid ?? ''}\0max-pending`;
    // Once an extra of a flood, always one: it is never approved, even after the older ones are decided.
    if (this.reported.has(flooded)) return { decision: 'refuse', rule: 'max-pending', message: 'refused earlier as an extra of a flood of pending CSRs' };
    const nodes = this.o.nodes;
    const parse = (): ReturnType<ParsedRequests['parse']> => this.o.requests.parse(csr.spec.request);
    const verdict = evaluateServingCsr(csr, parse, this.o.policy, {
      apiserverIps: await this.o.apiserver.current(),
      node: (name) => nodes.get(name),
      claimedBy: (key) => nodes.byIndex(NODE_ADDRESS_INDEX, key),
      pendingRank: this.o.pending.rank(csr.spec.username ?? '', key),
    });
    // Last, and only for a request that passed everything else: it asks the network.
    if (verdict.decision !== 'approve' || !this.o.resolveHost) return verdict;
    return (await checkDnsResolution(parse().dnsNames, nodes.get(verdict.nodeName), this.o.resolveHost)) ?? verdict;
  }

  private async approve(csr: CertificateSigningRequest, ctx: ReconcileContext): Promise<void> {
    const signer = csr.spec.signerName;
    const fields = { csr: csr.metadata?.name, signer, requester: csr.spec.username, decision: 'approved', reason: SERVING_METRIC_REASON };
    if (this.o.dryRun) {
      if (!firstReport(this.reported, `${csr.metadata?.uid ?? ''}\0approve`)) return;
      this.o.metrics.dryRunDecisions.inc({ signer, decision: 'approve', reason: SERVING_METRIC_REASON });
      ctx.logger.info({ ...fields, dryRun: true }, 'csr would be approved (dry run)');
      this.o.events.event(csr, 'Normal', 'DryRun', 'Approve', `Dry run: would approve: ${SERVING_APPROVED_MESSAGE}`);
      return;
    }
    const updated = await this.writeCondition(csr, { type: CONDITION_APPROVED, status: 'True', reason: SERVING_APPROVED_REASON, message: SERVING_APPROVED_MESSAGE });
    this.o.metrics.approved(signer, SERVING_METRIC_REASON);
    ctx.logger.info(fields, 'csr approved');
    this.o.events.event(updated, 'Normal', SERVING_APPROVED_REASON, 'Approve', SERVING_APPROVED_MESSAGE);
  }

  private async refuse(csr: CertificateSigningRequest, v: Refusal, ctx: ReconcileContext): Promise<void> {
    const signer = csr.spec.signerName;
    const deny = this.o.deny && DENIABLE_RULES.has(v.rule);
    const decision = deny ? 'deny' : 'pending';
    const message = `kubelet serving policy: ${v.rule}: ${v.message}`;
    const fields = { csr: csr.metadata?.name, signer, requester: csr.spec.username, decision, rule: v.rule, detail: v.message };
    const reportKey = `${csr.metadata?.uid ?? ''}\0${v.rule}`;
    if (deny && !this.o.dryRun) {
      // Written first, reported after: a failed write (409) is retried and reported once it lands.
      const updated = await this.writeCondition(csr, { type: CONDITION_DENIED, status: 'True', reason: POLICY_VIOLATION_REASON, message });
      firstReport(this.reported, reportKey);
      this.o.metrics.policyViolations.inc({ signer, rule: v.rule });
      this.o.metrics.denials.inc({ signer, reason: v.rule });
      ctx.logger.info(fields, 'csr denied');
      this.o.events.event(updated, 'Warning', POLICY_VIOLATION_REASON, 'Deny', message);
      return;
    }
    if (!firstReport(this.reported, reportKey)) return;
    this.o.metrics.policyViolations.inc({ signer, rule: v.rule });
    if (this.o.dryRun) {
      this.o.metrics.dryRunDecisions.inc({ signer, decision, reason: v.rule });
      ctx.logger.info({ ...fields, dryRun: true }, 'csr breaks the serving policy (dry run)');
      this.o.events.event(csr, 'Warning', 'DryRun', deny ? 'Deny' : 'Approve', `Dry run: would ${deny ? 'deny' : 'leave pending'}: ${message}`);
      return;
    }
    ctx.logger.info(fields, 'csr breaks the serving policy, left pending');
    this.o.events.event(csr, 'Warning', POLICY_VIOLATION_REASON, 'Approve', `Left pending: ${message}`);
  }

  /** The Node is not there yet: its informer's add event re-queues this CSR (serving-pending.ts). */
  private wait(csr: CertificateSigningRequest, message: string, ctx: ReconcileContext): void {
    if (!firstReport(this.reported, `${csr.metadata?.uid ?? ''}\0wait`)) return;
    ctx.logger.info({ csr: csr.metadata?.name, requester: csr.spec.username, detail: message }, 'csr waits for its node');
    this.o.events.event(csr, 'Normal', 'WaitingForNode', 'Approve', message);
  }

  /** PUT /approval with one more condition, on the informer's copy and its resourceVersion. */
  private async writeCondition(csr: CertificateSigningRequest, condition: CertificateSigningRequestCondition): Promise<CertificateSigningRequest> {
    const updated: CertificateSigningRequest = {
      ...csr,
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []), condition] },
    };
    try {
      await this.o.api.putApproval(updated);
    } catch (err) {
      throw wrapError('error updating approval for csr', err);
    }
    return updated;
  }
}
