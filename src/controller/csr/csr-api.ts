/**
 * The CSR calls the reconcilers make, in one place. Each write goes to the right subresource and
 * carries the resourceVersion of the informer's copy the decision was made on, so a decision based
 * on a stale copy fails with 409 (a requeue) instead of overwriting someone else's: no read
 * precedes a write, as in kube-controller-manager.
 */
import type { V1SubjectAccessReview } from '@kubernetes/client-node';
import { CSR_RESOURCE, CERTIFICATES_GROUP, type CertificateSigningRequest } from '../../api/certificates.js';
import type { KubeClient } from '../client/kube-client.js';
import { KeyedTurnBatch } from '../../lib/turn-batch.js';

const CSR_PATH = `/apis/${CERTIFICATES_GROUP}/v1/${CSR_RESOURCE}`;
const SAR_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** The requester's identity as the API server recorded it at create: the only identity we trust. */
export interface Requester {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export function requesterOf(csr: CertificateSigningRequest): Requester {
  const { username = '', uid, groups, extra } = csr.spec;
  return { username, uid, groups, extra };
}

/** What a SubjectAccessReview asks: may this requester create this pseudo-subresource of CSRs. */
interface Review extends Requester {
  subresource: string;
}

/** Raw JSON in and out (no typed-model walk): these calls run several times for every CSR. */
export class CsrApi {
  /**
   * Reviews of one turn, one per question: in a join storm many kubelets share a bootstrap token, and
   * the approver's workers ask the same question at once. A caller only joins a review not yet sent,
   * so every answer is still evaluated after its reconcile asked, as one review per CSR would be.
   */
  private readonly reviews = new KeyedTurnBatch<boolean>((key) => this.review(JSON.parse(key) as Review));

  constructor(private readonly raw: Pick<KubeClient, 'requestJSON' | 'write'>) {}

  /** PUT /approval with the object decided on (its resourceVersion is the precondition). */
  async putApproval(csr: CertificateSigningRequest): Promise<void> {
    await this.raw.write('PUT', `${csrPath(csr)}/approval`, csr);
  }

  /** PUT /status with the object decided on (its resourceVersion is the precondition). */
  async putStatus(csr: CertificateSigningRequest): Promise<void> {
    await this.raw.write('PUT', `${csrPath(csr)}/status`, csr);
  }

  /**
   * DELETE of the object decided on, with its uid and resourceVersion as preconditions: a CSR
   * re-created under the same name, or changed since, is never removed (409 instead).
   */
  async delete(csr: CertificateSigningRequest): Promise<void> {
    const { uid, resourceVersion } = csr.metadata ?? {};
    await this.raw.write('DELETE', csrPath(csr), { preconditions: { uid, resourceVersion } });
  }

  /** Whether `who` may `create` the pseudo-subresource (nodeclient, selfnodeclient) of CSRs. */
  allowed(who: Requester, subresource: string): Promise<boolean> {
    const { username, uid, groups, extra } = who;
    return this.reviews.join(JSON.stringify({ username, uid, groups, extra, subresource } satisfies Review));
  }

  private async review(r: Review): Promise<boolean> {
    const body: V1SubjectAccessReview = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: r.username,
        uid: r.uid,
        groups: r.groups,
        extra: r.extra,
        resourceAttributes: { group: CERTIFICATES_GROUP, resource: CSR_RESOURCE, verb: 'create', subresource: r.subresource },
      },
    };
    const review = await this.raw.requestJSON<V1SubjectAccessReview>('POST', SAR_PATH, {}, undefined, body);
    return review.status?.allowed === true;
  }
}

function csrPath(csr: CertificateSigningRequest): string {
  return `${CSR_PATH}/${encodeURIComponent(csr.metadata?.name ?? '')}`;
}
