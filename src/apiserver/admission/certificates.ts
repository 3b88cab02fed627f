/**
 * The three CSR admission plugins kube-apiserver enables by default: CertificateApproval (/approval
 * needs `approve` on the signer), CertificateSigning (setting status.certificate needs `sign`) and
 * CertificateSubjectRestriction (no system:masters client certificates from the built-in signer).
 */
import {
  CERTIFICATES_GROUP,
  CSR_RESOURCE,
  SIGNER_KUBE_APISERVER_CLIENT,
  type CertificateSigningRequestSpec,
} from '../../api/certificates.js';
import type { KObject } from '../../api/meta.js';
import { parseCertificateRequestPem } from '../../pki/csr.js';
import { errors, type ApiError } from '../http/errors.js';
import { bytesText, sameBytes } from '../registry/certificates/bytes.js';
import type { AdmissionAttributes } from '../registry/generic/admission.js';
import type { RequestContext } from '../registry/generic/strategy.js';
import { isAuthorizedForSignerName } from '../authorization/signers.js';
import type { AdmissionPlugin } from './chain.js';

const signerNameOf = (obj: KObject): string => (obj.spec as Partial<CertificateSigningRequestSpec> | undefined)?.signerName ?? '';

function admissionForbidden(obj: KObject, message: string): ApiError {
  return errors.admissionForbidden({ group: CERTIFICATES_GROUP, resource: CSR_RESOURCE, name: obj.metadata?.name }, message);
}

/** CertificateApproval: any update through /approval, checked against the stored signerName. */
async function admitApproval(old: KObject, ctx: RequestContext): Promise<void> {
  const signer = signerNameOf(old);
  if (!(await isAuthorizedForSignerName(ctx.authorizer, ctx.user, 'approve', signer))) {
    throw admissionForbidden(old, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`);
  }
}

/** CertificateSigning: /status updates that change status.certificate, checked against the stored signerName. */
async function admitSigning(obj: KObject, old: KObject, ctx: RequestContext): Promise<void> {
  const next = (obj.status as { certificate?: unknown } | undefined)?.certificate;
  const prev = (old.status as { certificate?: unknown } | undefined)?.certificate;
  if (sameBytes(next, prev)) return;
  const signer = signerNameOf(old);
  if (!(await isAuthorizedForSignerName(ctx.authorizer, ctx.user, 'sign', signer))) {
    throw admissionForbidden(old, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`);
  }
}

/** CertificateSubjectRestriction: on create of the main resource only. */
function admitSubjectRestriction(obj: KObject): void {
  const spec = (obj.spec ?? {}) as Partial<CertificateSigningRequestSpec>;
  if (spec.signerName !== SIGNER_KUBE_APISERVER_CLIENT) return;
  let organizations: string[];
  try {
    // Validation ran first and verified the self-signature (a bad one is a 422 before admission): this
    // plugin reads only the subject, as upstream's ParseCSR does, so verifying again (an import of the
    // key and an ECDSA or RSA verify, ~0.1 ms) would change nothing.
    organizations = parseCertificateRequestPem(bytesText(spec.request), { verifySignature: false }).subject.organizations;
  } catch (err) {
    throw admissionForbidden(obj, `failed to parse CSR: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (organizations.includes('system:masters')) {
    throw admissionForbidden(obj, `use of ${SIGNER_KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed`);
  }
}

const isCsr = (a: AdmissionAttributes): boolean => a.info.group === CERTIFICATES_GROUP && a.info.plural === CSR_RESOURCE;

export const certificateApproval: AdmissionPlugin = {
  name: 'CertificateApproval',
  validate(a) {
    return isCsr(a) && a.operation === 'UPDATE' && a.subresource === 'approval' && a.oldObject ? admitApproval(a.oldObject, a.ctx) : undefined;
  },
};

export const certificateSigning: AdmissionPlugin = {
  name: 'CertificateSigning',
  validate(a) {
    return isCsr(a) && a.operation === 'UPDATE' && a.subresource === 'status' && a.oldObject ? admitSigning(a.object, a.oldObject, a.ctx) : undefined;
  },
};

/** On create of the main resource only. */
export const certificateSubjectRestriction: AdmissionPlugin = {
  name: 'CertificateSubjectRestriction',
  validate(a) {
    if (isCsr(a) && a.operation === 'CREATE' && a.subresource === '') admitSubjectRestriction(a.object);
    return undefined;
  },
};
