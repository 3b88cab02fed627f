/**
 * Admission as kube-apiserver runs it: one chain of named plugins in a fixed order
 * (AllOrderedPlugins upstream), whichever of them are enabled, each seeing every write. Every
 * mutating plugin runs first, before the write's validation (so an admission 403 there wins over a
 * 422); every validating one runs after validation and the kind's own checks.
 */
import type { Admission, AdmissionAttributes } from '../registry/generic/admission.js';
import { certificateApproval, certificateSigning, certificateSubjectRestriction } from './certificates.js';
import { clusterTrustBundleAttest } from './cluster-trust-bundle-attest.js';
import { defaultTolerationSeconds } from './default-toleration-seconds.js';
import { nodeRestriction } from './node-restriction.js';
import { priorityAdmission } from './priority.js';
import { serviceAccountAdmission } from './service-account.js';

/** One admission plugin (upstream's admission.Interface with MutationInterface and/or ValidationInterface). */
export interface AdmissionPlugin {
  readonly name: AdmissionPluginName;
  /** Changes `a.object` in place, or refuses as `validate` does. */
  admit?(a: AdmissionAttributes): Promise<void> | undefined;
  /**
   * Refuses the write by throwing (or rejecting with) an ApiError. Returns undefined when it has
   * nothing to wait for, as for the writes it does not handle: most writes concern no plugin, and
   * each one that answered through a promise cost them a turn of the microtask queue.
   */
  validate?(a: AdmissionAttributes): Promise<void> | undefined;
}

/** The plugins this server has, in kube-apiserver's order. */
const ORDERED = {
  ServiceAccount: () => serviceAccountAdmission,
  NodeRestriction: nodeRestriction,
  Priority: () => priorityAdmission,
  DefaultTolerationSeconds: () => defaultTolerationSeconds,
  CertificateApproval: () => certificateApproval,
  CertificateSigning: () => certificateSigning,
  ClusterTrustBundleAttest: () => clusterTrustBundleAttest,
  CertificateSubjectRestriction: () => certificateSubjectRestriction,
} satisfies Record<string, () => AdmissionPlugin>;

export type AdmissionPluginName = keyof typeof ORDERED;

/** On unless turned off, as in kube-apiserver (NodeRestriction is not: kubeadm enables it). */
export const DEFAULT_ON_PLUGINS: readonly AdmissionPluginName[] = [
  'ServiceAccount',
  'Priority',
  'DefaultTolerationSeconds',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
];

/** The chain of the `enabled` plugins, in upstream's order whatever the order given. */
export function admissionChain(enabled: readonly AdmissionPluginName[]): Admission {
  const plugins = (Object.keys(ORDERED) as AdmissionPluginName[]).filter((n) => enabled.includes(n)).map((n) => ORDERED[n]());
  const mutating = plugins.flatMap((p) => (p.admit ? [p.admit.bind(p)] : []));
  const validating = plugins.flatMap((p) => (p.validate ? [p.validate.bind(p)] : []));
  return { admit: (a) => runFrom(mutating, 0, a), validate: (a) => runFrom(validating, 0, a) };
}

type Step = (a: AdmissionAttributes) => Promise<void> | undefined;

/** Runs `steps` from `first` in order: one that waits (an authorization check) holds back the ones after it. */
function runFrom(steps: readonly Step[], first: number, a: AdmissionAttributes): Promise<void> | undefined {
  for (let i = first; i < steps.length; i++) {
    const waiting = steps[i]!(a);
    if (waiting) return waiting.then(() => runFrom(steps, i + 1, a));
  }
  return undefined;
}
