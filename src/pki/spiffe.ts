/**
 * SPIFFE identities (the SPIFFE ID and X509-SVID specifications): a trust domain name, and the
 * `spiffe://<trust domain>/ns/<namespace>/sa/<service account>` path SPIFFE uses for Kubernetes
 * workloads. Checked here, once, so the controller's options and the signer agree on what is valid.
 */

/** Trust domain characters per the SPIFFE ID spec: lowercase letters, digits, `.`, `-`, `_`. */
const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
/** A path segment's characters: letters, digits, `.`, `-`, `_` (and never `.` or `..` alone). */
const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Why `name` is not a SPIFFE trust domain, or undefined when it is one. */
export function trustDomainError(name: string): string | undefined {
  if (name === '') return 'must not be empty';
  if (name.length > 255) return 'must be at most 255 characters';
  if (!TRUST_DOMAIN.test(name)) return 'must consist of lowercase letters, digits, ".", "-" and "_" (SPIFFE trust domain)';
  return undefined;
}

/** The SPIFFE ID of a Kubernetes service account; throws on segments a SPIFFE ID cannot hold. */
export function serviceAccountSpiffeId(trustDomain: string, namespace: string, serviceAccount: string): string {
  for (const segment of [namespace, serviceAccount]) {
    if (!SEGMENT.test(segment) || segment === '.' || segment === '..') throw new Error(`${JSON.stringify(segment)} cannot be a SPIFFE ID path segment`);
  }
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/** The SPIFFE IDs (URI SANs with the spiffe scheme) a certificate names. */
export function spiffeIdsOf(subjectAltName: string | undefined): string[] {
  return (subjectAltName ?? '')
    .split(', ')
    .filter((s) => s.startsWith('URI:spiffe://'))
    .map((s) => s.slice('URI:'.length));
}
