/**
 * certificates.k8s.io PodCertificateRequest (KEP-4317): plain types, names, limits and small helpers
 * shared by the API server's registry and the controller's workload signer.
 *
 * A kubelet creates one per pod `podCertificate` projected volume, with a fresh key; a signer answers
 * through /status with a certificate chain (condition Issued) or a Denied / Failed condition.
 *
 * Versions: v1 (GA) and v1beta1. Both carry the key as `stubPKCS10Request` (a DER PKCS#10 request
 * signed by the key: it is the proof of possession). v1beta1 also has the deprecated
 * `pkixPublicKey` + `proofOfPossession` pair (the key, and its signature over the pod UID), which v1
 * dropped. []byte fields travel as base64 text in JSON.
 */
import type { KObject, ObjectMeta } from './meta.js';
import type { Wire } from './wire.js';

export const PCR_RESOURCE = 'podcertificaterequests';
export const PCR_KIND = 'PodCertificateRequest';
/** The versions served, preferred first. */
export const PCR_VERSIONS = ['v1', 'v1beta1'] as const;
export type PcrVersion = (typeof PCR_VERSIONS)[number];
/** The version clients (the workload signer) should speak. */
export const PCR_API_VERSION = `certificates.k8s.io/${PCR_VERSIONS[0]}`;

/** The signers resource verb a signer needs to write a request's status (as for CSRs). */
export const VERB_SIGN = 'sign';

/** The one well-known pod-certificate signer upstream documents (client certificates for kube-apiserver). */
export const SIGNER_KUBE_APISERVER_CLIENT_POD = 'kubernetes.io/kube-apiserver-client-pod';

export const PCR_CONDITION_ISSUED = 'Issued';
export const PCR_CONDITION_DENIED = 'Denied';
export const PCR_CONDITION_FAILED = 'Failed';
/** The conditions a request may carry: each terminal, at most one of them, status True. */
export const PCR_TERMINAL_CONDITIONS = [PCR_CONDITION_ISSUED, PCR_CONDITION_DENIED, PCR_CONDITION_FAILED] as const;
/** The Denied reason a signer must use for a key type it does not support (it may name one it does in the message). */
export const PCR_REASON_UNSUPPORTED_KEY_TYPE = 'UnsupportedKeyType';

/** spec.maxExpirationSeconds: defaulted to 24 h; every signer's range is [1 h, 91 d], kubernetes.io signers' [1 h, 24 h]. */
export const PCR_DEFAULT_MAX_EXPIRATION_SECONDS = 86_400;
export const PCR_MIN_MAX_EXPIRATION_SECONDS = 3_600;
export const PCR_MAX_MAX_EXPIRATION_SECONDS = 7_862_400;
export const PCR_KUBERNETES_MAX_MAX_EXPIRATION_SECONDS = 86_400;

/** Byte limits of the key material (after base64 decoding) and of status.certificateChain. */
export const PCR_MAX_KEY_MATERIAL_BYTES = 10 * 1024;
export const PCR_MAX_CERTIFICATE_CHAIN_BYTES = 100 * 1024;

/** The key types kube-apiserver accepts (and kubelet may generate); a signer may support fewer. */
export const PCR_KEY_TYPES = ['RSA3072', 'RSA4096', 'ECDSAP256', 'ECDSAP384', 'ECDSAP521', 'ED25519'] as const;
export type PcrKeyType = (typeof PCR_KEY_TYPES)[number];

/** The spec as v1 carries it. Every field is immutable after creation. */
export interface PodCertificateRequestSpecV1 {
  signerName: string;
  podName: string;
  podUID: string;
  serviceAccountName: string;
  serviceAccountUID: string;
  nodeName: string;
  nodeUID: string;
  /** Defaulted to 86400 by the server. */
  maxExpirationSeconds?: number;
  /** Base64 of a DER PKCS#10 request signed by the subject key; signers take the public key from it. */
  stubPKCS10Request: string;
  /** Copied by kubelet from the projected volume; not checked by anyone, so never trust them for identity. */
  unverifiedUserAnnotations?: Record<string, string>;
}

/** The spec as v1beta1 carries it: v1's fields plus the deprecated key pair. */
export interface PodCertificateRequestSpecV1beta1 extends Omit<PodCertificateRequestSpecV1, 'stubPKCS10Request'> {
  stubPKCS10Request?: string;
  /** Deprecated: base64 of the PKIX (SubjectPublicKeyInfo DER) public key. */
  pkixPublicKey?: string;
  /** Deprecated: base64 of the key's signature over the ASCII pod UID. */
  proofOfPossession?: string;
}

/** metav1.Condition, as PodCertificateRequest status uses it (every field but observedGeneration required). */
export interface PodCertificateRequestCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface PodCertificateRequestStatus {
  conditions?: PodCertificateRequestCondition[];
  /** PEM CERTIFICATE blocks, leaf first. Set with notBefore, beginRefreshAt and notAfter, once. */
  certificateChain?: string;
  /** RFC 3339 times; notBefore and notAfter equal the leaf's, beginRefreshAt lies between them. */
  notBefore?: string;
  beginRefreshAt?: string;
  notAfter?: string;
}

export interface PodCertificateRequest extends KObject {
  metadata?: ObjectMeta;
  spec: PodCertificateRequestSpecV1;
  status?: PodCertificateRequestStatus;
}

export interface PodCertificateRequestV1beta1 extends KObject {
  metadata?: ObjectMeta;
  spec: PodCertificateRequestSpecV1beta1;
  status?: PodCertificateRequestStatus;
}

/**
 * A request as the API server decodes and stores it, in either version (v1's fields are a subset of
 * v1beta1's): every field may be absent, as Go decodes it; validation says which are required.
 */
export interface PodCertificateRequestWire extends KObject {
  spec?: Wire<PodCertificateRequestSpecV1beta1>;
  status?: Wire<PodCertificateRequestStatus>;
}

/** The True terminal condition of a request (Issued, Denied or Failed), if it has one. */
export function pcrTerminalCondition(pcr: { status?: PodCertificateRequestStatus }): PodCertificateRequestCondition | undefined {
  return pcr.status?.conditions?.find(
    (c) => c.status === 'True' && (PCR_TERMINAL_CONDITIONS as readonly string[]).includes(c.type),
  );
}

/** Whether the request was already answered (issued, denied or failed): a signer must leave it alone. */
export function pcrIsTerminal(pcr: { status?: PodCertificateRequestStatus }): boolean {
  return pcrTerminalCondition(pcr) !== undefined;
}

/** IsKubernetesSignerName: the signer's domain is kubernetes.io or one under it (reserved for the project). */
export function isKubernetesSignerName(signerName: string): boolean {
  const host = signerName.split('/', 1)[0] ?? '';
  return host === 'kubernetes.io' || host.endsWith('.kubernetes.io');
}

/** The largest maxExpirationSeconds a request for `signerName` may ask for. */
export function maxMaxExpirationSeconds(signerName: string): number {
  return isKubernetesSignerName(signerName) ? PCR_KUBERNETES_MAX_MAX_EXPIRATION_SECONDS : PCR_MAX_MAX_EXPIRATION_SECONDS;
}
