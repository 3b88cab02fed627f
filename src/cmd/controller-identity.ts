/**
 * The user `up`'s controller acts as: system:kube-identity-controller, with a client certificate
 * minted at each start from the cluster CA and held only in memory. A person uses the admin
 * kubeconfig, so the audit log tells the controller's approvals and issuances from theirs. Like
 * the admin kubeconfig it replaces, it is in system:masters.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { issueCertificate } from '../pki/issue.js';
import { generateKeyPair } from '../pki/keys.js';

export const UP_CONTROLLER_USER = 'system:kube-identity-controller';

const YEAR_MS = 365 * 86_400_000;
/** As the server's own certificates: a little clock skew never makes it not yet valid. */
const BACKDATE_MS = 5 * 60_000;

export async function controllerKubeConfig(url: string, ca: { certPem: string; keyPem: string }): Promise<KubeConfig> {
  const key = generateKeyPair();
  const now = Date.now();
  const certPem = await issueCertificate(ca, {
    subject: { commonName: UP_CONTROLLER_USER, organizations: ['system:masters'] },
    publicKeyPem: key.publicKeyPem,
    usages: ['digital signature', 'key encipherment', 'client auth'],
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + YEAR_MS),
  });
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'kube-identity', server: url, caData: b64(ca.certPem), skipTLSVerify: false }],
    users: [{ name: UP_CONTROLLER_USER, certData: b64(certPem), keyData: b64(key.privateKeyPem) }],
    contexts: [{ name: 'controller', cluster: 'kube-identity', user: UP_CONTROLLER_USER }],
    currentContext: 'controller',
  });
  return kc;
}
