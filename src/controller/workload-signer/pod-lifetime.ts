/**
 * The validity of a pod certificate, within the API's status rules: notBefore is the signing time
 * (the API server refuses one more than 5 minutes from its clock, so no backdating), the lifetime is
 * the smaller of the request's maxExpirationSeconds and the policy's maximum, never past the CA's own
 * NotAfter and never under an hour; beginRefreshAt falls at a random point between 1/2 and 4/5 of
 * the lifetime, so pods that started together do not all refresh together. Every time is whole
 * seconds: the certificate and the API's RFC 3339 timestamps must say the same instant.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** The API's shortest certificate lifetime. */
export const MIN_LIFETIME_MS = 60 * MINUTE;
/** beginRefreshAt must be at least this far from either end (the API's rule). */
const REFRESH_MARGIN_MS = 10 * MINUTE;

export interface PodCertificateTimes {
  notBefore: Date;
  notAfter: Date;
  beginRefreshAt: Date;
}

export interface PodLifetimeOptions {
  now: number;
  /** spec.maxExpirationSeconds (the server defaults it to 24 h). */
  maxExpirationSeconds: number;
  policyMaxMs: number;
  caNotAfter: Date;
  /** A number in [0, 1): where between 1/2 and 4/5 the refresh falls. */
  jitter: number;
}

/** The certificate's times, or a reason it cannot be issued (the CA expires within the hour). */
export function podCertificateTimes(o: PodLifetimeOptions): PodCertificateTimes | { refusal: string } {
  const floor = (ms: number): number => Math.floor(ms / SECOND) * SECOND;
  const notBefore = floor(o.now);
  const lifetime = Math.min(o.maxExpirationSeconds * SECOND, o.policyMaxMs);
  const notAfter = Math.min(notBefore + lifetime, floor(o.caNotAfter.getTime()));
  if (notAfter - notBefore < MIN_LIFETIME_MS) {
    return { refusal: `the signer's CA expires at ${o.caNotAfter.toISOString()}, less than an hour from now: a pod certificate must live at least 1h` };
  }
  const span = notAfter - notBefore;
  const at = floor(notBefore + span * (0.5 + 0.3 * o.jitter));
  const beginRefreshAt = Math.min(Math.max(at, notBefore + REFRESH_MARGIN_MS), notAfter - REFRESH_MARGIN_MS);
  return { notBefore: new Date(notBefore), notAfter: new Date(notAfter), beginRefreshAt: new Date(beginRefreshAt) };
}

/** RFC 3339 in whole seconds, as metav1.Time is written. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
