/**
 * What a kubelet does with its identity, step by step, for `kube-identity demo`: each step is a
 * small function over the API (as the node itself wherever a kubelet acts as itself) that returns
 * the one line the demo prints.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import {
  AuthenticationV1Api,
  CertificatesV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  V1MicroTime,
  type V1CertificateSigningRequest,
} from '@kubernetes/client-node';
import { SIGNER_KUBELET_SERVING } from '../api/certificates.js';
import { UserAgentKubeConfig } from './user-agent-kubeconfig.js';
import { NODE_LEASE_NAMESPACE } from '../api/nodes.js';
import { bundleKey } from '../controller/revisions/revision-data.js';
import { readCertificateInfo } from '../pki/certificate.js';
import { createCertificateRequestPem } from '../pki/csr.js';
import { generateKeyPair } from '../pki/keys.js';
import { decodePemBlocks } from '../pki/pem.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const randomText = (n: number): string => [...randomBytes(n)].map((b) => ALPHABET[b % ALPHABET.length]).join('');

/** A key and the certificate issued for it (PEM). */
export interface Credential {
  keyPem: string;
  certPem: string;
}

/** A kubeconfig for the same cluster as `base`, authenticating as `user`. */
export function kubeConfigAs(base: KubeConfig, user: { token?: string } | Credential): KubeConfig {
  const cluster = base.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const auth = 'certPem' in user ? { certData: b64(user.certPem), keyData: b64(user.keyPem) } : user;
  // The same tool as `base` (its User-Agent), as another user.
  const kc = base instanceof UserAgentKubeConfig ? new UserAgentKubeConfig(base.userAgent) : new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'demo', ...auth }],
    contexts: [{ name: 'demo', cluster: cluster.name, user: 'demo' }],
    currentContext: 'demo',
  });
  return kc;
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** The cluster CA the kubeconfig trusts (PEM), which `up` also signs kubelet certificates with. */
export function clusterCaPem(kc: KubeConfig): string {
  const cluster = kc.getCurrentCluster();
  if (cluster?.caData) return Buffer.from(cluster.caData, 'base64').toString('utf8');
  throw new Error('the kubeconfig has no certificate-authority-data for its cluster');
}

/** Where kube-identity's controller publishes each signer's CA bundle (its --trust-bundle-* defaults). */
export const TRUST_BUNDLE = { namespace: 'kube-system', name: 'kube-identity-trust-bundle' };

/**
 * The kubelet-serving signer's CA bundle as kube-identity's controller publishes it, or undefined
 * when the cluster has no such bundle (another signer, such as kube-controller-manager's).
 */
export async function servingCaPem(admin: KubeConfig): Promise<string | undefined> {
  try {
    const cm = await admin.makeApiClient(CoreV1Api).readNamespacedConfigMap(TRUST_BUNDLE);
    return cm.data?.[bundleKey(SIGNER_KUBELET_SERVING)];
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** A bootstrap token Secret in kube-system, in kubeadm's default node-token group. */
export async function createBootstrapToken(admin: KubeConfig): Promise<string> {
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

export interface CsrAsk {
  node: string;
  signerName: string;
  usages: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  expirationSeconds?: number;
  generateName: string;
}

/**
 * Submits a CSR for a fresh P-256 key as whoever `as` authenticates; waits until it is issued. When
 * it is not, the error carries the last Event about the CSR (read as `observer`, the admin): the
 * approver's reason for leaving it pending.
 */
export async function requestCertificate(as: KubeConfig, observer: KubeConfig, ask: CsrAsk, timeoutMs: number): Promise<Credential & { csr: V1CertificateSigningRequest }> {
  const key = generateKeyPair('ECDSA-P256');
  const pem = await createCertificateRequestPem({
    privateKeyPem: key.privateKeyPem,
    commonName: `system:node:${ask.node}`,
    organizations: ['system:nodes'],
    dnsNames: ask.dnsNames,
    ipAddresses: ask.ipAddresses,
  });
  const api = as.makeApiClient(CertificatesV1Api);
  const created = await api.createCertificateSigningRequest({
    body: {
      metadata: { generateName: ask.generateName },
      spec: { request: b64(pem), signerName: ask.signerName, usages: ask.usages, expirationSeconds: ask.expirationSeconds },
    },
  });
  const name = created.metadata?.name ?? '';
  let csr: V1CertificateSigningRequest;
  try {
    csr = await waitForIssued(api, name, timeoutMs);
  } catch (err) {
    const why = await lastEventAbout(observer, name);
    throw new Error(`${(err as Error).message}${why ? `; last event: ${why}` : ''}`, { cause: err });
  }
  return { keyPem: key.privateKeyPem, certPem: Buffer.from(csr.status?.certificate ?? '', 'base64').toString('utf8'), csr };
}

function stateOf(csr: V1CertificateSigningRequest): string {
  const types = (csr.status?.conditions ?? []).map((c) => c.type);
  return [types.length > 0 ? types.join(',') : 'Pending', csr.status?.certificate ? 'Issued' : ''].filter(Boolean).join(',');
}

async function waitForIssued(api: CertificatesV1Api, name: string, timeoutMs: number): Promise<V1CertificateSigningRequest> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const csr = await api.readCertificateSigningRequest({ name });
    if (csr.status?.certificate) return csr;
    const state = stateOf(csr);
    const refused = csr.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (refused) throw new Error(`CSR ${name} was ${refused.type}: ${refused.message ?? refused.reason ?? ''}`);
    if (Date.now() > deadline) throw new Error(`CSR ${name} was not issued within ${timeoutMs / 1000}s (state: ${state})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function lastEventAbout(kc: KubeConfig, name: string): Promise<string | undefined> {
  try {
    // Filtered here: not every server supports field selectors on Events (ours does not).
    const events = await kc.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: 'default' });
    const last = events.items.filter((e) => e.involvedObject.name === name).at(-1);
    return last ? `${last.reason ?? ''}: ${last.message ?? ''}` : undefined;
  } catch {
    return undefined;
  }
}

/** The Approved condition's message, for the demo's lines. */
export const approvalOf = (csr: V1CertificateSigningRequest): string => csr.status?.conditions?.find((c) => c.type === 'Approved')?.message ?? '';

/**
 * An InternalIP in 10.244.0.0/16 that no Node holds: the serving policy refuses a SAN that names
 * another Node, so a second demo on the same cluster must not reuse the first one's address.
 */
export async function freeNodeAddress(admin: KubeConfig): Promise<string> {
  const nodes = await admin.makeApiClient(CoreV1Api).listNode();
  const held = new Set(nodes.items.flatMap((n) => (n.status?.addresses ?? []).map((a) => a.address)));
  for (;;) {
    const [a = 0, b = 0] = randomBytes(2);
    const ip = `10.244.${a}.${(b % 254) + 1}`;
    if (!held.has(ip)) return ip;
  }
}

/** Registers the Node as the node does: create, then report its addresses through /status. */
export async function registerNode(asNode: KubeConfig, name: string, addresses: { type: string; address: string }[]): Promise<void> {
  const core = asNode.makeApiClient(CoreV1Api);
  const node = await core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } } } });
  await core.replaceNodeStatus({ name, body: { ...node, status: { addresses, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }] } } });
}

/** The node's heartbeat: its Lease in kube-node-lease, created and then renewed `renewals` times. */
export async function heartbeat(asNode: KubeConfig, name: string, renewals: number): Promise<string> {
  const api = asNode.makeApiClient(CoordinationV1Api);
  let lease = await api.createNamespacedLease({
    namespace: NODE_LEASE_NAMESPACE,
    body: { metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new V1MicroTime() } },
  });
  for (let i = 0; i < renewals; i++) {
    await new Promise((r) => setTimeout(r, 100));
    lease = await api.replaceNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE, body: { ...lease, spec: { ...lease.spec, renewTime: new V1MicroTime() } } });
  }
  const renewed = lease.spec?.renewTime as unknown;
  return renewed instanceof Date ? renewed.toISOString() : String(renewed ?? '');
}

/**
 * Serves HTTPS on loopback with the serving certificate, connects as a client that trusts only
 * `caPem` and expects the node's name, and returns what the client verified (rejects when it does
 * not verify).
 */
export async function checkServing(serving: Credential, caPem: string, nodeName: string): Promise<{ port: number; subject: string; san: string }> {
  const server = createServer({ key: serving.keyPem, cert: serving.certPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const peer = await new Promise<{ subject: string; san: string }>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, servername: nodeName, ca: caPem, rejectUnauthorized: true }, () => {
        const cert = socket.getPeerCertificate();
        socket.end();
        resolve({ subject: String(cert.subject.CN ?? ''), san: cert.subjectaltname ?? '' });
      });
      socket.once('error', reject);
    });
    return { port, ...peer };
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/** Who the API server says the credential is. */
export async function whoAmI(kc: KubeConfig): Promise<{ username: string; groups: string[] }> {
  const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  return { username: review.status?.userInfo?.username ?? '?', groups: review.status?.userInfo?.groups ?? [] };
}

/** Seconds from now until the certificate expires. */
export function secondsLeft(certPem: string): number {
  const first = decodePemBlocks(certPem)[0];
  if (!first) throw new Error('no certificate in the PEM');
  return Math.round((readCertificateInfo(first.der).notAfter.getTime() - Date.now()) / 1000);
}

