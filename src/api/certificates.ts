/**
 * certificates.k8s.io/v1 CertificateSigningRequest as it travels as JSON: `request` and
 * `certificate` are Go []byte fields, so they hold base64 text here. Plain types and constants only,
 * shared by the API server's registry and the CSR controller.
 */
import type { KObject, ObjectMeta } from './meta.js';

export const CERTIFICATES_GROUP = 'certificates.k8s.io';
export const CSR_API_VERSION = 'certificates.k8s.io/v1';
export const CSR_KIND = 'CertificateSigningRequest';
export const CSR_RESOURCE = 'certificatesigningrequests';

/** The 23 key usages v1 accepts (KeyUsage constants upstream), in declaration order. */
export const KEY_USAGES = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
] as const;

export type KeyUsage = (typeof KEY_USAGES)[number];

export const SIGNER_KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';
export const SIGNER_KUBE_APISERVER_CLIENT_KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SIGNER_KUBELET_SERVING = 'kubernetes.io/kubelet-serving';
/** v1beta1's default signer; rejected by v1 validation for new objects. */
export const SIGNER_LEGACY_UNKNOWN = 'kubernetes.io/legacy-unknown';

export const CONDITION_APPROVED = 'Approved';
export const CONDITION_DENIED = 'Denied';
export const CONDITION_FAILED = 'Failed';

export type RequestConditionType = typeof CONDITION_APPROVED | typeof CONDITION_DENIED | typeof CONDITION_FAILED | string;

export interface CertificateSigningRequestCondition {
  type: RequestConditionType;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string | null;
  lastTransitionTime?: string | null;
}

export interface CertificateSigningRequestSpec {
  /** Base64 of a PEM `CERTIFICATE REQUEST` block. */
  request: string;
  signerName: string;
  expirationSeconds?: number;
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface CertificateSigningRequestStatus {
  conditions?: CertificateSigningRequestCondition[];
  /** Base64 of a PEM chain of `CERTIFICATE` blocks. */
  certificate?: string;
}

export interface CertificateSigningRequest extends KObject {
  apiVersion?: typeof CSR_API_VERSION;
  kind?: typeof CSR_KIND;
  metadata?: ObjectMeta;
  spec: CertificateSigningRequestSpec;
  status?: CertificateSigningRequestStatus;
}
