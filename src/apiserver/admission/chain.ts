/**
 * Admission as kube-apiserver runs it: one chain of named plugins in a fixed order
 * (AllOrderedPlugins upstream), whichever of them are enabled, each seeing every write. Upstream runs
 * every mutating plugin, then every validating one; none of these mutates (ServiceAccount's
 * defaulting is the pod strategy's), so the chain has the validating phase only. The registries call
 * it after a write's validation and the kind's own checks, so a 422 wins over an admission 403.
 */
import type { Admission, AdmissionAttributes } from '../registry/generic/admission.js';
import { certificateApproval, certificateSigning, certificateSubjectRestriction } from './certificates.js';
import { clusterTrustBundleAttest } from './cluster-trust-bundle-attest.js';
import { nodeRestriction } from './node-restriction.js';
import { serviceAccountAdmission } from './service-account.js';

/** One admission plugin (upstream's admission.Interface with ValidationInterface). */
export interface AdmissionPlugin {
  readonly name: AdmissionPluginName;
  /**
   * Refuses the write by throwing (or rejecting with) an ApiError. Returns undefined when it has
   * nothing to wait for, as for the writes it does not handle: most writes concern no plugin, and
   * each one that answered through a promise cost them a turn of the microtask queue.
   */
  validate(a: AdmissionAttributes): Promise<void> | undefined;
}

/** The plugins this server has, in kube-apiserver's order. */
const ORDERED = {
  ServiceAccount: () => serviceAccountAdmission,
  NodeRestriction: nodeRestriction,
  CertificateApproval: () => certificateApproval,
  CertificateSigning: () => certificateSigning,
  ClusterTrustBundleAttest: () => clusterTrustBundleAttest,
  CertificateSubjectRestriction: () => certificateSubjectRestriction,
} satisfies Record<string, () => AdmissionPlugin>;

export type AdmissionPluginName = keyof typeof ORDERED;

/** On unless turned off, as in kube-apiserver (NodeRestriction is not: kubeadm enables it). */
export const DEFAULT_ON_PLUGINS: readonly AdmissionPluginName[] = [
  'ServiceAccount',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
];

/** The chain of the `enabled` plugins, in upstream's order whatever the order given. */
export function admissionChain(enabled: readonly AdmissionPluginName[]): Admission {
  const plugins = (Object.keys(ORDERED) as AdmissionPluginName[]).filter((n) => enabled.includes(n)).map((n) => ORDERED[n]());
  return { validate: (a) => validateFrom(plugins, 0, a) };
}

/** Runs `plugins` from `first` in order: one that waits (an authorization check) holds back the ones after it. */
function validateFrom(plugins: readonly AdmissionPlugin[], first: number, a: AdmissionAttributes): Promise<void> | undefined {
  for (let i = first; i < plugins.length; i++) {
    const waiting = plugins[i]!.validate(a);
    if (waiting) return waiting.then(() => validateFrom(plugins, i + 1, a));
  }
  return undefined;
}
