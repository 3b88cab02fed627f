/**
 * Pure readers of a CSR's state, with the exact predicates kube-controller-manager uses: the
 * approver and the signers disagree on what "approved" means, so each is spelled out here once.
 */
import {
  CONDITION_APPROVED,
  CONDITION_DENIED,
  CONDITION_FAILED,
  type CertificateSigningRequest,
  type CertificateSigningRequestCondition,
} from '../../api/certificates.js';

export function findCondition(
  csr: CertificateSigningRequest,
  type: string,
): CertificateSigningRequestCondition | undefined {
  return csr.status?.conditions?.find((c) => c.type === type);
}

export function hasCertificate(csr: CertificateSigningRequest): boolean {
  return (csr.status?.certificate ?? '').length > 0;
}

/** The approver leaves a CSR alone once any Approved or Denied condition exists, whatever its status. */
export function isDecided(csr: CertificateSigningRequest): boolean {
  return findCondition(csr, CONDITION_APPROVED) !== undefined || findCondition(csr, CONDITION_DENIED) !== undefined;
}

/** The signers' notion: an Approved condition and no Denied condition (status is not consulted). */
export function isApproved(csr: CertificateSigningRequest): boolean {
  return findCondition(csr, CONDITION_APPROVED) !== undefined && findCondition(csr, CONDITION_DENIED) === undefined;
}

export function isDenied(csr: CertificateSigningRequest): boolean {
  return findCondition(csr, CONDITION_DENIED) !== undefined;
}

/** A Failed condition with status True or empty makes a CSR terminal for the signers. */
export function isFailed(csr: CertificateSigningRequest): boolean {
  const failed = findCondition(csr, CONDITION_FAILED);
  return failed !== undefined && (failed.status === 'True' || failed.status === '');
}

/** `status.certificate` decoded to PEM text ('' when absent). */
export function certificatePem(csr: CertificateSigningRequest): string {
  return Buffer.from(csr.status?.certificate ?? '', 'base64').toString('latin1');
}
