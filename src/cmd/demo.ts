/**
 * `kube-identity demo`: plays a kubelet's life against `kube-identity up` or any cluster in a
 * kubeconfig, one line per step: bootstrap token → kubelet client CSR, approved and issued → Node
 * registered with its addresses → Lease heartbeats in kube-node-lease → serving CSR, approved by
 * policy → an HTTPS listener on loopback serving with it, checked by a TLS client that trusts the
 * kubelet-serving CA and the node's name (and told whether the cluster CA, kube-root-ca.crt's,
 * refuses it, as it must when the trust domains are apart) → client certificate rotated (short expirationSeconds) and the API
 * called with the new one → two pods bound to the node get SPIFFE certificates through
 * PodCertificateRequests the node creates (the workload signer's, demo-workload.ts) and open mutual
 * TLS to each other, verified against the signer's ClusterTrustBundle (skipped, and said so, on a
 * cluster that serves no PodCertificateRequests). A failing step says which step and why, and the command exits 1.
 * The serving step needs the serving approver (`up` runs it by default; elsewhere
 * `kube-identity controller --approve-kubelet-serving`).
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { SIGNER_KUBE_APISERVER_CLIENT_KUBELET, SIGNER_KUBELET_SERVING } from '../api/certificates.js';
import {
  approvalOf,
  checkServing,
  clusterCaPem,
  createBootstrapToken,
  freeNodeAddress,
  heartbeat,
  kubeConfigAs,
  randomText,
  registerNode,
  requestCertificate,
  secondsLeft,
  servingCaPem,
  TRUST_BUNDLE,
  whoAmI,
  type Credential,
} from './demo-kubelet.js';
import { loadKubeConfig } from './controller.js';
import { UserAgentKubeConfig } from './user-agent-kubeconfig.js';
import { kubernetesUserAgent } from '../lib/user-agent.js';
import { buildVersion } from '../lib/version.js';
import { createPods, mutualTls, refusesOtherTrustDomain, requestPodCertificate, servedPodCertificateApiVersion, trustBundleOf } from './demo-workload.js';

export interface DemoFlags {
  kubeconfig?: string;
  node?: string;
  address?: string;
  timeout: string;
  workloadSigner: string;
}

/** What to change when the serving CSR stays pending: the approver's policy decides on the address. */
const SERVING_PENDING_HINT =
  'a serving CSR stays pending when no serving approver runs (kube-identity controller --approve-kubelet-serving) or when its policy refuses the address: pass --address with an IP inside --kubelet-serving-allowed-ip-ranges that no other Node holds';

const CLIENT_USAGES = ['digital signature', 'client auth'];
const SERVING_USAGES = ['digital signature', 'server auth'];
/** The shortest lifetime a CSR may ask for (600 s): the rotated certificate is short-lived on purpose. */
const ROTATED_SECONDS = 600;

let stepNo = 0;

/** Runs one step and prints its line; a failure names the step. */
async function step<T>(name: string, run: () => Promise<T>, line: (v: T) => string): Promise<T> {
  stepNo++;
  let value: T;
  try {
    value = await run();
  } catch (err) {
    throw new Error(`step ${stepNo} (${name}) failed: ${messageOf(err)}`, { cause: err });
  }
  process.stdout.write(`${String(stepNo).padStart(2)}. ${name}: ${line(value)}\n`);
  return value;
}

/** client-node's ApiException carries the Status body; its message is what the server said. */
function messageOf(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const status = JSON.parse(body) as { message?: string; code?: number };
      if (status.message) return `${status.code ?? ''} ${status.message}`.trim();
    } catch {
      // not a Status: fall through
    }
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Step 6: the serving certificate verified against the kubelet-serving CA (kube-identity's trust
 * bundle; the cluster CA when there is none), and whether the cluster CA, the one kube-root-ca.crt
 * holds and every in-cluster client trusts for the API server, would accept it too.
 */
async function verifyServing(admin: KubeConfig, serving: Credential, node: string): Promise<{ port: number; subject: string; san: string; verifiedBy: string; clusterCa: string }> {
  const clusterCa = clusterCaPem(admin);
  const servingCa = await servingCaPem(admin);
  if (servingCa === undefined) {
    const v = await checkServing(serving, clusterCa, node);
    return { ...v, verifiedBy: `the cluster CA (no kubelet-serving bundle in ${TRUST_BUNDLE.namespace}/${TRUST_BUNDLE.name})`, clusterCa: 'one CA for both' };
  }
  const v = await checkServing(serving, servingCa, node);
  const alsoCluster = await checkServing(serving, clusterCa, node).then(
    () => 'the cluster CA (kube-root-ca.crt) accepts it too: the signers share one CA',
    () => 'the cluster CA (kube-root-ca.crt) refuses it',
  );
  return { ...v, verifiedBy: `the kubelet-serving CA (${TRUST_BUNDLE.namespace}/${TRUST_BUNDLE.name})`, clusterCa: alsoCluster };
}

export async function runDemo(flags: DemoFlags): Promise<void> {
  stepNo = 0;
  const timeoutMs = Number(flags.timeout) * 1000;
  const node = flags.node ?? `demo-${randomText(5)}`;
  const admin = await loadKubeConfig(flags.kubeconfig ?? '', new UserAgentKubeConfig(`${kubernetesUserAgent('kube-identity', buildVersion())}/demo`));
  process.stdout.write(`A kubelet's life as node ${node} on ${admin.getCurrentCluster()?.server ?? '?'}\n`);
  const token = await step('bootstrap token', () => createBootstrapToken(admin), (t) => `${t.split('.')[0] ?? ''}.**** created in kube-system`);

  const client = await step(
    'client certificate',
    () => requestCertificate(kubeConfigAs(admin, { token }), admin, { node, signerName: SIGNER_KUBE_APISERVER_CLIENT_KUBELET, usages: CLIENT_USAGES, generateName: 'node-csr-' }, timeoutMs),
    (c) => `CSR ${c.csr.metadata?.name ?? ''} from ${c.csr.spec.username ?? ''}: ${approvalOf(c.csr)} Issued.`,
  );
  const asNode = kubeConfigAs(admin, client);
  const address = flags.address ?? (await freeNodeAddress(admin));
  const addresses = [
    { type: 'InternalIP', address },
    { type: 'Hostname', address: node },
  ];
  await step('node registered', () => registerNode(asNode, node, addresses), () => `Node ${node} created by itself, status.addresses ${addresses.map((a) => a.address).join(', ')}`);
  await step('lease heartbeats', () => heartbeat(asNode, node, 3), (at) => `Lease kube-node-lease/${node} created and renewed 3 times (last ${at})`);

  const serving = await step(
    'serving certificate',
    () =>
      requestCertificate(asNode, admin, { node, signerName: SIGNER_KUBELET_SERVING, usages: SERVING_USAGES, dnsNames: [node], ipAddresses: [address], generateName: 'serving-csr-' }, timeoutMs).catch(
        (err: unknown) => {
          throw (err as Error).message.includes('was not issued within') ? new Error(`${(err as Error).message} (${SERVING_PENDING_HINT})`, { cause: err }) : err;
        },
      ),
    (c) => `CSR ${c.csr.metadata?.name ?? ''} for DNS:${node}, IP:${address}: ${approvalOf(c.csr)} Issued.`,
  );
  await step('https listener', () => verifyServing(admin, serving, node), (v) => `127.0.0.1:${v.port} serves CN=${v.subject} (${v.san}), verified against ${v.verifiedBy} as "${node}"; ${v.clusterCa}`);

  const rotated: Credential = await step(
    'client certificate rotated',
    () => requestCertificate(asNode, admin, { node, signerName: SIGNER_KUBE_APISERVER_CLIENT_KUBELET, usages: CLIENT_USAGES, expirationSeconds: ROTATED_SECONDS, generateName: 'node-csr-' }, timeoutMs),
    (c) => `CSR ${c.csr.metadata?.name ?? ''} from ${c.csr.spec.username ?? ''} with the old certificate: ${approvalOf(c.csr)} Issued, expires in ${secondsLeft(c.certPem)}s.`,
  );
  await step('api called with the new certificate', () => whoAmI(kubeConfigAs(admin, rotated)), (u) => `the server says this node is ${u.username} (groups: ${u.groups.join(', ')})`);
  await workloadSteps(admin, kubeConfigAs(admin, rotated), rotated, { ...flags, node }, timeoutMs);
}

/** Steps 9-12: two pods on the node get SPIFFE certificates through PodCertificateRequests and talk mutual TLS. */
async function workloadSteps(admin: KubeConfig, asNode: KubeConfig, nodeCredential: Credential, flags: DemoFlags & { node: string }, timeoutMs: number): Promise<void> {
  const { node, workloadSigner: signerName } = flags;
  const apiVersion = await servedPodCertificateApiVersion(admin);
  if (apiVersion === undefined) {
    process.stdout.write(`    (pod certificates skipped: ${admin.getCurrentCluster()?.server ?? 'the cluster'} serves no PodCertificateRequests)\n`);
    return;
  }
  const pods = await step('pods scheduled', () => createPods(admin, node, ['frontend', 'backend'], signerName), (p) => `${p.map((x) => `${x.namespace}/${x.name} (service account ${x.serviceAccountName})`).join(' and ')} bound to ${node}`);
  const nodeUid = (await admin.makeApiClient(CoreV1Api).readNode({ name: node })).metadata?.uid ?? '';
  const [frontend, backend] = await step(
    'pod certificates',
    () => Promise.all(pods.map((pod) => requestPodCertificate(asNode, admin, { apiVersion, signerName, node, nodeUid, pod }, timeoutMs))),
    (creds) => `${creds.map((c) => `${c.requestName}: Issued ${c.spiffeId}`).join('; ')} (${apiVersion} PodCertificateRequests with fresh P-256 keys, from system:node:${node}; refresh from ${creds[0]?.status.beginRefreshAt ?? '?'}, expire ${creds[0]?.status.notAfter ?? '?'})`,
  );
  if (!frontend || !backend) throw new Error('two pod certificates were expected');
  const bundle = await step('trust bundle', () => trustBundleOf(asNode, signerName), (b) => `ClusterTrustBundle ${b.names.join(', ')} (spec.signerName=${signerName}), read as the node`);
  await step(
    'mutual tls',
    async () => ({ ...(await mutualTls(frontend, backend, bundle.pem)), refused: await refusesOtherTrustDomain(backend, nodeCredential, bundle.pem) }),
    (m) =>
      `frontend → backend on 127.0.0.1:${m.port}: backend verified ${m.serverSaw}, frontend verified ${m.clientSaw}, each against the ClusterTrustBundle alone; ${m.refused ? "the node's own certificate (cluster CA) is refused" : "the node's own certificate (cluster CA) is ACCEPTED"}`,
  );
}
