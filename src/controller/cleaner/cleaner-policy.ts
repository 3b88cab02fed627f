/**
 * When kube-controller-manager's csrcleaner deletes a CSR, as a pure decision over one object and
 * a clock reading. The controller only lists, asks this, and deletes.
 */
import {
  CONDITION_APPROVED,
  CONDITION_DENIED,
  CONDITION_FAILED,
  type CertificateSigningRequest,
} from '../../api/certificates.js';
import { certificateNotAfter, findCondition, hasCertificate } from '../csr/csr-conditions.js';

export interface CleanerDurations {
  /** Approved and issued CSRs, from the Approved condition's lastUpdateTime (upstream 1 h). */
  approvedMs: number;
  /** Denied and Failed CSRs, from that condition's lastUpdateTime (upstream 1 h for both). */
  deniedMs: number;
  /** CSRs with no condition at all, from creationTimestamp (upstream 24 h). */
  pendingMs: number;
}

export const DEFAULT_CLEANER_DURATIONS: CleanerDurations = {
  approvedMs: 60 * 60 * 1000,
  deniedMs: 60 * 60 * 1000,
  pendingMs: 24 * 60 * 60 * 1000,
};

export type CleanReason = 'issued' | 'denied' | 'failed' | 'pending' | 'expired';

/** True when `stamp` is set and more than `ms` before `now` (a zero or absent time never matches). */
function olderThan(stamp: string | null | undefined, ms: number, now: number): boolean {
  if (!stamp) return false;
  const t = Date.parse(stamp);
  return Number.isFinite(t) && t > 0 && now - t > ms;
}

/** Whether the first certificate in status.certificate has expired; unparsable counts as not expired. */
function certificateExpired(csr: CertificateSigningRequest, now: number): boolean {
  const notAfter = certificateNotAfter(csr);
  return notAfter !== undefined && notAfter < now;
}

/** The rule that makes this CSR garbage, or undefined to keep it. */
export function cleanReason(
  csr: CertificateSigningRequest,
  now: number,
  d: CleanerDurations = DEFAULT_CLEANER_DURATIONS,
): CleanReason | undefined {
  const approved = findCondition(csr, CONDITION_APPROVED);
  const issued = approved !== undefined && hasCertificate(csr);
  if (issued && olderThan(approved.lastUpdateTime, d.approvedMs, now)) return 'issued';
  return terminalReason(csr, now, d) ?? (issued && certificateExpired(csr, now) ? 'expired' : undefined);
}

/** Denied, Failed and pending-too-long, in upstream's order (before the expired-certificate rule). */
function terminalReason(csr: CertificateSigningRequest, now: number, d: CleanerDurations): CleanReason | undefined {
  if (olderThan(findCondition(csr, CONDITION_DENIED)?.lastUpdateTime, d.deniedMs, now)) return 'denied';
  if (olderThan(findCondition(csr, CONDITION_FAILED)?.lastUpdateTime, d.deniedMs, now)) return 'failed';
  const conditions = csr.status?.conditions ?? [];
  if (conditions.length === 0 && olderThan(csr.metadata?.creationTimestamp, d.pendingMs, now)) return 'pending';
  return undefined;
}
