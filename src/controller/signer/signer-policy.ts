/**
 * What each signer checks before signing, by signer name: the three Kubernetes signers with their
 * kube-controller-manager controller names and pre-sign checks, and configured custom signers,
 * which place no subject policy (their approvers decide what to approve).
 */
import {
  SIGNER_KUBE_APISERVER_CLIENT,
  SIGNER_KUBE_APISERVER_CLIENT_KUBELET,
  SIGNER_KUBELET_SERVING,
  SIGNER_LEGACY_UNKNOWN,
} from '../../api/certificates.js';
import type { ParsedCsr } from '../../pki/csr.js';
import { validateClientUsages, validateKubeletClientCsr, validateKubeletServingCsr } from '../csr/csr-policy.js';

/** Returns the first failure's message, or undefined when the request may be signed. */
export type SignerCheck = (csr: ParsedCsr, usages: readonly string[]) => string | undefined;

export interface SignerPolicy {
  signerName: string;
  /** The controller's name (upstream's for the Kubernetes signers). */
  controllerName: string;
  /** A name for the check, recorded in the signer's ControllerRevision. */
  policy: 'kubelet-serving' | 'kubelet-client' | 'kube-apiserver-client' | 'none';
  check: SignerCheck;
}

const none: SignerCheck = () => undefined;

export const BUILTIN_SIGNERS: readonly SignerPolicy[] = [
  { signerName: SIGNER_KUBELET_SERVING, controllerName: 'csrsigning-kubelet-serving', policy: 'kubelet-serving', check: validateKubeletServingCsr },
  { signerName: SIGNER_KUBE_APISERVER_CLIENT_KUBELET, controllerName: 'csrsigning-kubelet-client', policy: 'kubelet-client', check: validateKubeletClientCsr },
  { signerName: SIGNER_KUBE_APISERVER_CLIENT, controllerName: 'csrsigning-kube-apiserver-client', policy: 'kube-apiserver-client', check: validateClientUsages },
  // As upstream: no restriction on what it signs (v1 refuses to create such CSRs; older ones remain).
  { signerName: SIGNER_LEGACY_UNKNOWN, controllerName: 'csrsigning-legacy-unknown', policy: 'none', check: none },
];

/** The policy for a signer name: a built-in one, or "sign anything approved" for a custom signer. */
export function signerPolicy(signerName: string): SignerPolicy {
  const builtin = BUILTIN_SIGNERS.find((s) => s.signerName === signerName);
  if (builtin) return builtin;
  return { signerName, controllerName: `csrsigning-${signerName.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`, policy: 'none', check: none };
}
