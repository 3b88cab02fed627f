/**
 * csrapproving: kube-controller-manager's auto-approver for kubelet client certificates. Only
 * `kubernetes.io/kube-apiserver-client-kubelet` CSRs are considered (the signer filter comes first);
 * identity comes only from spec.username/uid/groups/extra, which the API server set at create, never
 * from the CN or SANs. It approves through SubjectAccessReview on the `selfnodeclient` / `nodeclient`
 * pseudo-subresources, leaves everything else pending, and never denies.
 */
import { CONDITION_APPROVED, SIGNER_KUBE_APISERVER_CLIENT_KUBELET, type CertificateSigningRequest } from '../../api/certificates.js';
import type { ParsedCsr } from '../../pki/csr.js';
import { RequeueError, wrapError } from '../client/errors.js';
import type { ReconcileContext, Reconciler, Result } from '../runtime/reconcile.js';
import { requesterOf } from '../csr/csr-api.js';
import { hasCertificate, isDecided } from '../csr/csr-conditions.js';
import { validateKubeletClientCsr } from '../csr/csr-policy.js';
import type { CsrReconcilerDeps } from '../csr/csr-deps.js';

export const APPROVER_NAME = 'csrapproving';
export const APPROVED_REASON = 'AutoApproved';

/** A way a CSR can be recognised, the SAR pseudo-subresource that authorises it, and upstream's message. */
export interface Recognizer {
  subresource: 'selfnodeclient' | 'nodeclient';
  recognize(csr: CertificateSigningRequest, parsed: ParsedCsr): boolean;
  message: string;
}

const isNodeClient = (csr: CertificateSigningRequest, parsed: ParsedCsr): boolean =>
  csr.spec.signerName === SIGNER_KUBE_APISERVER_CLIENT_KUBELET && validateKubeletClientCsr(parsed, csr.spec.usages ?? []) === undefined;

/** Upstream order: a node renewing its own certificate first, then any kubelet client request. */
export const RECOGNIZERS: readonly Recognizer[] = [
  {
    subresource: 'selfnodeclient',
    recognize: (csr, parsed) => csr.spec.username === parsed.subject.commonName && isNodeClient(csr, parsed),
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
  },
  {
    subresource: 'nodeclient',
    recognize: isNodeClient,
    message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
  },
];

export type ApproverOptions = CsrReconcilerDeps;

/** Whether the approver has nothing to do with this CSR (upstream's skip rules plus the signer filter). */
export function approverSkips(csr: CertificateSigningRequest): boolean {
  return csr.spec.signerName !== SIGNER_KUBE_APISERVER_CLIENT_KUBELET || hasCertificate(csr) || isDecided(csr);
}

export class ApproverReconciler implements Reconciler {
  constructor(private readonly o: ApproverOptions) {
    o.metrics.initApprovals(SIGNER_KUBE_APISERVER_CLIENT_KUBELET, RECOGNIZERS.map((r) => r.subresource));
  }

  async reconcile(key: string, ctx: ReconcileContext): Promise<Result> {
    // Decided on the informer's copy; the approval carries its resourceVersion, so a stale copy
    // (someone approved or denied meanwhile) costs a 409 and a requeue, never a second decision.
    const csr = this.o.csrs.get(key);
    if (!csr || approverSkips(csr)) return 'done';
    let parsed: Readonly<ParsedCsr>;
    try {
      // Like upstream's approver: parse only; the signer verifies the self-signature before signing.
      parsed = this.o.requests.parse(csr.spec.request);
    } catch (err) {
      // Upstream requeues: the request is immutable, but a retry costs little and the backoff caps it.
      throw wrapError(`unable to parse csr "${key}"`, err);
    }
    const tried: string[] = [];
    for (const r of RECOGNIZERS) {
      if (!r.recognize(csr, parsed)) continue;
      tried.push(r.subresource);
      if (!(await this.o.api.allowed(requesterOf(csr), r.subresource))) continue;
      await this.approve(csr, r, ctx);
      return 'done';
    }
    if (tried.length > 0) {
      // Recognised but not (yet) authorised: an RBAC binding may still appear, so retry quietly.
      throw new RequeueError(`recognized csr "${key}" as [${tried.join(' ')}] but subject access review was not approved`);
    }
    ctx.logger.debug({ csr: key }, 'csr not recognised, left pending');
    return 'done';
  }

  private async approve(csr: CertificateSigningRequest, r: Recognizer, ctx: ReconcileContext): Promise<void> {
    const conditions = [...(csr.status?.conditions ?? [])];
    conditions.push({ type: CONDITION_APPROVED, status: 'True', reason: APPROVED_REASON, message: r.message });
    const updated: CertificateSigningRequest = { ...csr, status: { ...csr.status, conditions } };
    try {
      await this.o.api.putApproval(updated);
    } catch (err) {
      throw wrapError('error updating approval for csr', err);
    }
    this.o.metrics.approved(csr.spec.signerName, r.subresource);
    ctx.logger.info({ csr: csr.metadata?.name, signer: csr.spec.signerName, decision: 'approved', reason: r.subresource, requester: csr.spec.username }, 'csr approved');
    this.o.events.event(updated, 'Normal', APPROVED_REASON, 'Approve', r.message);
  }
}
