/**
 * `kube-identity demo`: plays a kubelet's life against `kube-identity up` or any cluster in a
 * kubeconfig, one line per step: bootstrap token → kubelet client CSR, approved and issued → Node
 * registered with its addresses → Lease heartbeats in kube-node-lease → serving CSR, approved by
 * policy → an HTTPS listener on loopback serving with it, checked by a TLS client that trusts the
 * kubelet-serving CA and the node's name (and told whether the cluster CA, kube-root-ca.crt's,
 * refuses it, as it must when the trust domains are apart) → client certificate rotated (short expirationSeconds) and the API
 * called with the new one. A failing step says which step and why, and the command exits 1.
 * The serving step needs the serving approver (`up` runs it by default; elsewhere
 * `kube-identity controller --approve-kubelet-serving`).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Command } from 'commander';
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

interface DemoFlags {
  kubeconfig?: string;
  node: string;
  address?: string;
  timeout: string;
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
    throw new Error(`step ${stepNo} (${name}) failed: ${messageOf(err)}`);
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

async function runDemo(flags: DemoFlags): Promise<void> {
  stepNo = 0;
  const timeoutMs = Number(flags.timeout) * 1000;
  const node = flags.node;
  const admin = loadKubeConfig(flags.kubeconfig ?? '');
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
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description("play a kubelet's life: bootstrap token, client certificate, Node and Lease, serving certificate by policy, HTTPS with it, client certificate rotation")
    .option('--kubeconfig <file>', 'admin kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config)')
    .option('--node <name>', 'node name to play', `demo-${randomText(5)}`)
    .option('--address <ip>', "the node's InternalIP (default: a 10.244.0.0/16 address no Node holds; the serving policy refuses loopback and other Nodes' addresses)")
    .option('--timeout <seconds>', 'how long to wait for each certificate', '60')
    .action(async (flags: DemoFlags) => {
      await runDemo(flags);
    });
}
