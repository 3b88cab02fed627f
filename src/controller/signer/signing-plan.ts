/**
 * Which signers run, with which CA files, by kube-controller-manager's rules. Apart from register.ts,
 * which wires the controllers, so `up`'s main thread can name the signers for its controller's RBAC
 * without loading the controllers and the Kubernetes client (a second of CPU at every start).
 */
import { parseCustomSigners } from '../../config/load.js';
import type { ControllerConfig } from '../../config/schema.js';
import type { CaFiles } from './ca-source.js';
import { BUILTIN_SIGNERS, signerPolicy, type SignerPolicy } from './signer-policy.js';

/** A signer to run and the CA files it signs with. */
export interface SigningPlanEntry {
  policy: SignerPolicy;
  files: CaFiles;
}

const OWN_FILES: Record<string, [keyof ControllerConfig, keyof ControllerConfig]> = {
  'kubernetes.io/kubelet-serving': ['clusterSigningKubeletServingCertFile', 'clusterSigningKubeletServingKeyFile'],
  'kubernetes.io/kube-apiserver-client-kubelet': ['clusterSigningKubeletClientCertFile', 'clusterSigningKubeletClientKeyFile'],
  'kubernetes.io/kube-apiserver-client': ['clusterSigningKubeApiserverClientCertFile', 'clusterSigningKubeApiserverClientKeyFile'],
  'kubernetes.io/legacy-unknown': ['clusterSigningLegacyUnknownCertFile', 'clusterSigningLegacyUnknownKeyFile'],
};

/**
 * Upstream's rules: the shared pair serves every Kubernetes signer; once any per-signer pair is set,
 * only the signers with their own files run. Custom signers use their own pair or the shared one.
 */
export function signingPlan(config: ControllerConfig): SigningPlanEntry[] {
  const shared: CaFiles | undefined = config.clusterSigningCertFile ? { certFile: config.clusterSigningCertFile, keyFile: config.clusterSigningKeyFile } : undefined;
  const plan: SigningPlanEntry[] = [];
  for (const policy of BUILTIN_SIGNERS) {
    const [cert, key] = OWN_FILES[policy.signerName] as [keyof ControllerConfig, keyof ControllerConfig];
    const own = config[cert] ? { certFile: String(config[cert]), keyFile: String(config[key]) } : undefined;
    const files = own ?? shared;
    if (files) plan.push({ policy, files });
  }
  for (const e of parseCustomSigners(config.customSigners)) {
    const files = e.certFile && e.keyFile ? { certFile: e.certFile, keyFile: e.keyFile } : shared;
    if (files) plan.push({ policy: signerPolicy(e.signerName), files });
  }
  return plan;
}
