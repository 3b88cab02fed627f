/**
 * What the workload signer reads from a PodCertificateRequest beyond the shared types: the key to
 * certify, from either served shape (v1's `stubPKCS10Request`, a PKCS#10 signed by the key, or
 * v1beta1's deprecated `pkixPublicKey`). Nothing else in the stub request is used: its names are
 * whatever the requester put there, the identity is not.
 */
import { PCR_RESOURCE, type PodCertificateRequestV1beta1 } from '../../api/pod-certificates.js';
import { parseCertificateRequestDer } from '../../pki/csr.js';

/** Either served shape, as the cache holds it (v1beta1's spec is v1's with optional key fields). */
export type CachedPodCertificateRequest = PodCertificateRequestV1beta1;

/** The SPKI (DER) the certificate is issued to; throws when the spec holds no readable key. */
export function requestedPublicKey(spec: Readonly<CachedPodCertificateRequest['spec']>): Uint8Array {
  if (spec.stubPKCS10Request) return parseCertificateRequestDer(Buffer.from(spec.stubPKCS10Request, 'base64')).publicKeyDer;
  if (spec.pkixPublicKey) return Buffer.from(spec.pkixPublicKey, 'base64');
  throw new Error('the request holds neither spec.stubPKCS10Request nor spec.pkixPublicKey');
}

/** The object's own path, in the version it was read in (the informer sets apiVersion). */
export function pcrPath(pcr: Readonly<CachedPodCertificateRequest>): string {
  const { namespace = '', name = '' } = pcr.metadata ?? {};
  return `/apis/${pcr.apiVersion ?? ''}/namespaces/${encodeURIComponent(namespace)}/${PCR_RESOURCE}/${encodeURIComponent(name)}`;
}
