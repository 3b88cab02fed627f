/**
 * `kube-identity demo`: plays a node joining a cluster, end to end. As the admin it creates a
 * bootstrap token; as that token it submits a kubelet client CSR; it waits until the controller
 * approves and issues it; then it calls the API over mTLS with the issued certificate and prints
 * who the server says it is. Works against `kube-identity up` and any cluster in a kubeconfig.
 */
import { randomBytes } from 'node:crypto';
import {
  AuthenticationV1Api,
  CertificatesV1Api,
  CoreV1Api,
  KubeConfig,
  type V1CertificateSigningRequest,
} from '@kubernetes/client-node';
import type { Command } from 'commander';
import { SIGNER_KUBE_APISERVER_CLIENT_KUBELET } from '../api/certificates.js';
import { createCertificateRequestPem } from '../pki/csr.js';
import { generateKeyPair } from '../pki/keys.js';
import { loadKubeConfig } from './controller.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomText = (n: number): string => [...randomBytes(n)].map((b) => ALPHABET[b % ALPHABET.length]).join('');

interface DemoFlags {
  kubeconfig?: string;
  node: string;
  timeout: string;
}

/** A kubeconfig for the same cluster as `base`, authenticating as `user`. */
function kubeConfigAs(base: KubeConfig, user: { token?: string; certData?: string; keyData?: string }): KubeConfig {
  const cluster = base.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'demo', ...user }],
    contexts: [{ name: 'demo', cluster: cluster.name, user: 'demo' }],
    currentContext: 'demo',
  });
  return kc;
}

async function createBootstrapToken(admin: KubeConfig): Promise<string> {
  const id = randomText(6);
  const secret = randomText(16);
  const expiration = new Date(Date.now() + 60 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await admin.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: 'kube-system',
    body: {
      metadata: { name: `bootstrap-token-${id}` },
      type: 'bootstrap.kubernetes.io/token',
      stringData: {
        'token-id': id,
        'token-secret': secret,
        expiration,
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
      },
    },
  });
  return `${id}.${secret}`;
}

function describeState(csr: V1CertificateSigningRequest): string {
  if (csr.status?.certificate) return 'issued';
  const types = (csr.status?.conditions ?? []).map((c) => c.type);
  return types.length > 0 ? types.join(',') : 'pending';
}

async function waitForCertificate(api: CertificatesV1Api, name: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const csr = await api.readCertificateSigningRequest({ name });
    const state = describeState(csr);
    if (state !== last) process.stdout.write(`  certificatesigningrequest/${name}: ${state}\n`);
    last = state;
    if (csr.status?.certificate) return csr.status.certificate;
    if (state.includes('Denied') || state.includes('Failed')) throw new Error(`CSR ${name} was not issued: ${state}`);
    if (Date.now() > deadline) throw new Error(`CSR ${name} was not issued within ${timeoutMs / 1000}s (state: ${state})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function runDemo(flags: DemoFlags): Promise<void> {
  const admin = loadKubeConfig(flags.kubeconfig ?? '');
  process.stdout.write(`Joining node ${flags.node} to ${admin.getCurrentCluster()?.server ?? '?'}\n`);
  const token = await createBootstrapToken(admin);
  process.stdout.write(`  bootstrap token ${token.split('.')[0]}.**** created in kube-system\n`);

  const key = generateKeyPair('ECDSA-P256');
  const request = await createCertificateRequestPem({
    privateKeyPem: key.privateKeyPem,
    commonName: `system:node:${flags.node}`,
    organizations: ['system:nodes'],
  });
  const asBootstrap = kubeConfigAs(admin, { token }).makeApiClient(CertificatesV1Api);
  const created = await asBootstrap.createCertificateSigningRequest({
    body: {
      metadata: { generateName: 'node-csr-' },
      spec: {
        request: Buffer.from(request).toString('base64'),
        signerName: SIGNER_KUBE_APISERVER_CLIENT_KUBELET,
        usages: ['digital signature', 'client auth'],
      },
    },
  });
  const name = created.metadata?.name ?? '';
  process.stdout.write(`  submitted kubelet client CSR ${name} as system:bootstrap:${token.split('.')[0]}\n`);
  const certificate = await waitForCertificate(asBootstrap, name, Number(flags.timeout) * 1000);

  const asNode = kubeConfigAs(admin, { certData: certificate, keyData: Buffer.from(key.privateKeyPem).toString('base64') });
  const review = await asNode.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  const user = review.status?.userInfo;
  process.stdout.write(`The server says this node is: ${user?.username ?? '?'} (groups: ${(user?.groups ?? []).join(', ')})\n`);
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('play a node joining: bootstrap token, kubelet client CSR, auto-approval, issuance, mTLS call')
    .option('--kubeconfig <file>', 'admin kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config)')
    .option('--node <name>', 'node name to join as', `demo-${randomText(5)}`)
    .option('--timeout <seconds>', 'how long to wait for the certificate', '60')
    .action(async (flags: DemoFlags) => {
      await runDemo(flags);
    });
}
