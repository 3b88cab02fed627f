/**
 * The user `up`'s controller acts as: system:kube-identity-controller, with a client certificate
 * minted at each start from the cluster CA and held only in memory. A person uses the admin
 * kubeconfig, so the audit log tells the controller's approvals and issuances from theirs. It is in
 * no group: as kube-controller-manager's identity, it may do what the server's default policy grants
 * it for the controller's configuration (controllerPolicyScope) and nothing else.
 */
import { kubeconfigText } from '../apiserver/server/credentials.js';
import { KUBE_IDENTITY_CONTROLLER_USER, type ControllerPolicyScope } from '../apiserver/authorization/rbac/default-policy.js';
import { SIGNER_KUBE_APISERVER_CLIENT_KUBELET, SIGNER_KUBELET_SERVING } from '../api/certificates.js';
import type { ControllerConfig } from '../config/schema.js';
import { workloadSignerNames } from '../config/workload-signer.js';
import { signingPlan } from '../controller/signer/signing-plan.js';
import { issueCertificate } from '../pki/issue.js';
import { generateKeyPair } from '../pki/keys.js';

const YEAR_MS = 365 * 86_400_000;
/** As the server's own certificates: a little clock skew never makes it not yet valid. */
const BACKDATE_MS = 5 * 60_000;

/**
 * What the controller will run with, as its identity's RBAC needs it: the signers it issues for and
 * approves, the workload signer's names, the serving approver and secure metrics, and the one
 * namespace of its Lease, revisions and trust bundle (up keeps all three in the Lease's, kube-system).
 */
export function controllerPolicyScope(config: ControllerConfig): ControllerPolicyScope {
  return {
    csrSigners: signingPlan(config).map((e) => e.policy.signerName),
    approvedSigners: [SIGNER_KUBE_APISERVER_CLIENT_KUBELET, ...(config.approveKubeletServing ? [SIGNER_KUBELET_SERVING] : [])],
    workloadSigners: workloadSignerNames(config.workloadSignerNames),
    servingApprover: config.approveKubeletServing,
    metricsAuth: config.metricsSecure,
    namespace: config.leaderElectionNamespace,
    leaseName: config.leaderElectionId,
    trustBundleConfigMap: config.trustBundleConfigMapName,
  };
}

/** The controller's kubeconfig, as text: the Kubernetes client that reads it loads on the controller's thread alone. */
export async function controllerKubeConfig(url: string, ca: { certPem: string; keyPem: string }): Promise<string> {
  const key = generateKeyPair();
  const now = Date.now();
  const certPem = await issueCertificate(ca, {
    subject: { commonName: KUBE_IDENTITY_CONTROLLER_USER },
    publicKeyPem: key.publicKeyPem,
    usages: ['digital signature', 'key encipherment', 'client auth'],
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + YEAR_MS),
  });
  return kubeconfigText(url, ca.certPem, { name: KUBE_IDENTITY_CONTROLLER_USER, certPem, keyPem: key.privateKeyPem });
}
