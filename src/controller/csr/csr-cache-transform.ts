/**
 * What a CSR looks like in the controller's cache: no managedFields; the strings that repeat
 * from CSR to CSR (signer, usages, requester name and groups, condition type/status/reason/message)
 * shared instead of copied per object (~0.5 KB less heap per cached CSR); and no certificate PEM
 * (~1 KB): the cache's readers only ask whether one is set and, for the cleaner, when it expires,
 * which is kept instead (CACHED_CERTIFICATE). Reconcilers write from this copy only while no
 * certificate is set (every writer skips issued CSRs), so the PEM left out is never written back.
 * Timestamps, names, uids and extra (credential ids) vary per object and are left alone. The expiry of a
 * certificate this controller issued comes from `issued` without decoding the certificate.
 */
import type { CertificateSigningRequest } from '../../api/certificates.js';
import { StringInterner } from '../informer/interner.js';
import type { IssuedCertificates } from './issued-certificates.js';
import { stripManagedFields } from '../informer/informer.js';
import { CACHED_CERTIFICATE, certificateNotAfter, type CachedCertificate } from './csr-conditions.js';

export function csrCacheTransform(interner = new StringInterner(), issued?: IssuedCertificates): (csr: CertificateSigningRequest) => CertificateSigningRequest {
  const i = interner;
  return (input) => {
    const csr = stripManagedFields(input);
    // A frozen input (a test's scripted object) is cached as it is.
    if (Object.isFrozen(csr.spec) || Object.isFrozen(csr.status)) return csr;
    const spec = csr.spec;
    if (spec) {
      spec.signerName = i.intern(spec.signerName);
      if (spec.username !== undefined) spec.username = i.intern(spec.username);
      i.internAll(spec.usages);
      i.internAll(spec.groups);
    }
    const status = csr.status;
    if (status?.certificate) {
      const cached: CachedCertificate = { notAfter: issued?.take(status.certificate) ?? certificateNotAfter(csr) };
      Object.assign(csr, { [CACHED_CERTIFICATE]: cached });
      delete status.certificate;
    }
    for (const c of status?.conditions ?? []) {
      if (Object.isFrozen(c)) continue;
      c.type = i.intern(c.type);
      c.status = i.intern(c.status);
      if (c.reason !== undefined) c.reason = i.intern(c.reason);
      if (c.message !== undefined) c.message = i.intern(c.message);
    }
    return csr;
  };
}
