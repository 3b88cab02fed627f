import { PkiError } from './errors.js';

const MINUTE = 60_000;
/** Upstream signing-policy constants (pkg/controller/certificates/authority/policies.go). */
export const BACKDATE_MS = 5 * MINUTE;
export const SHORT_LIVED_MS = 8 * 60 * MINUTE;
/** Requested durations below this are raised to it (twice the backdate). */
export const MIN_REQUESTED_DURATION_MS = 10 * MINUTE;
/** kube-controller-manager's --cluster-signing-duration default (8760h). */
export const DEFAULT_MAX_DURATION_MS = 8760 * 60 * MINUTE;

/** The TTL the signer uses for a request: certTTL when unset or larger, at least 10 minutes otherwise. */
export function requestedDuration(maxDurationMs: number, expirationSeconds?: number | null): number {
  if (expirationSeconds === undefined || expirationSeconds === null) return maxDurationMs;
  const requested = expirationSeconds * 1000;
  if (requested > maxDurationMs) return maxDurationMs;
  if (requested < MIN_REQUESTED_DURATION_MS) return MIN_REQUESTED_DURATION_MS;
  return requested;
}

export interface LifetimeOptions {
  now: Date;
  /** NotAfter of the signing CA certificate. */
  caNotAfter: Date;
  /** Maximum TTL in ms (the signer's certTTL). */
  maxDuration: number;
  /** spec.expirationSeconds, if the CSR asked for one. */
  expirationSeconds?: number | null;
  /** Backdating in ms (default 5 minutes). */
  backdate?: number;
  /** TTLs below this are not shortened by the backdate (default 8 hours). */
  short?: number;
}

/**
 * NotBefore/NotAfter exactly as upstream's permissive signing policy computes them: backdated by 5m,
 * long-lived certificates keep their TTL as total validity, short-lived ones gain the backdate, and
 * NotAfter never passes the CA's NotAfter. Throws the upstream messages when the CA has expired.
 */
export function certificateLifetime(o: LifetimeOptions): { notBefore: Date; notAfter: Date } {
  const backdate = o.backdate ?? BACKDATE_MS;
  const short = o.short ?? SHORT_LIVED_MS;
  const ttl = requestedDuration(o.maxDuration, o.expirationSeconds);
  const now = o.now.getTime();
  const caEnd = o.caNotAfter.getTime();
  const notBefore = now - backdate;
  let notAfter = ttl < short ? now + ttl : now + ttl - backdate;
  if (!(notAfter < caEnd)) notAfter = caEnd;
  if (!(notBefore < caEnd)) {
    throw new PkiError(`the signer has expired: NotAfter=${formatGoTime(o.caNotAfter)}`, 'lifetime');
  }
  if (!(now < caEnd)) {
    throw new PkiError(`refusing to sign a certificate that expired in the past: NotAfter=${formatGoTime(o.caNotAfter)}`, 'lifetime');
  }
  return { notBefore: new Date(notBefore), notAfter: new Date(notAfter) };
}

/** A UTC time the way Go's time.Time.String prints it, e.g. `2025-01-02 03:04:05 +0000 UTC`. */
export function formatGoTime(d: Date): string {
  const iso = d.toISOString();
  const frac = iso.slice(19, 23).replace(/\.?0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac} +0000 UTC`;
}
