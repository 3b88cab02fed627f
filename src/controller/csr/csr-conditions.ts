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
import { readCertificateInfo } from '../../pki/certificate.js';
import { decodePemBlocks } from '../../pki/pem.js';

/**
 * What the controller's cache keeps of an issued certificate instead of its PEM (~1 KB per CSR;
 * see csr-cache-transform.ts): that one is set, and when the first one expires (undefined when it
 * does not parse). Only cached objects carry it; objects read from the API keep status.certificate.
 */
export const CACHED_CERTIFICATE = Symbol('cachedCertificate');
export interface CachedCertificate {
  notAfter: number | undefined;
}
type MaybeCached = CertificateSigningRequest & { [CACHED_CERTIFICATE]?: CachedCertificate };

export function findCondition(
  csr: CertificateSigningRequest,
  type: string,
): CertificateSigningRequestCondition | undefined {
  return csr.status?.conditions?.find((c) => c.type === type);
}

export function hasCertificate(csr: CertificateSigningRequest): boolean {
  return (csr.status?.certificate ?? '').length > 0 || (csr as MaybeCached)[CACHED_CERTIFICATE] !== undefined;
}

/** When the first certificate in status.certificate expires (ms), or undefined when none parses. */
export function certificateNotAfter(csr: CertificateSigningRequest): number | undefined {
  const cached = (csr as MaybeCached)[CACHED_CERTIFICATE];
  if (cached) return cached.notAfter;
  try {
    const first = decodePemBlocks(certificatePem(csr))[0];
    if (!first || first.type !== 'CERTIFICATE') return undefined;
    return readCertificateInfo(first.der).notAfter.getTime();
  } catch {
    return undefined;
  }
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
