/** What the CSR reconcilers (the approver and every signer) are all given. */
import type { CertificateSigningRequest } from '../../api/certificates.js';
import type { Clock } from '../../lib/clock.js';
import type { CsrMetrics } from '../../metrics/csr.js';
import type { EventRecorder } from '../events/broadcaster.js';
import type { ReadonlyCache } from '../informer/cache.js';
import type { CsrApi } from './csr-api.js';
import type { IssuedCertificates } from './issued-certificates.js';
import type { ParsedRequests } from './parsed-requests.js';

export interface CsrReconcilerDeps {
  api: CsrApi;
  /** The shared CSR informer's cache: the copy every decision is made on (writes carry its resourceVersion). */
  csrs: ReadonlyCache<CertificateSigningRequest>;
  events: EventRecorder;
  metrics: CsrMetrics;
  clock: Clock;
  /** Parses of spec.request shared by the approver and the signers, made without verification (signers verify). */
  requests: ParsedRequests;
  /** Where signers leave the expiry of what they issue, for the CSR cache (absent: it reads the certificate). */
  issued?: IssuedCertificates;
}
