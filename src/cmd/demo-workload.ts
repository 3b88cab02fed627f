/**
 * The workload identity steps of `kube-identity demo`: the node, acting as its kubelet would for a
 * pod's podCertificate volume, asks for each pod's certificate with a fresh key through a
 * PodCertificateRequest; the workload signer answers with a SPIFFE ID it takes from the pod's service
 * account; the pods fetch the signer's ClusterTrustBundle and open mutual TLS to each other on
 * loopback, each verifying the other's SPIFFE ID against that bundle alone.
 */
import { X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type PeerCertificate, type TLSSocket } from 'node:tls';
import { CertificatesV1Api, CertificatesV1beta1Api, CoreV1Api, KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { PCR_KIND, PCR_RESOURCE, pcrTerminalCondition, type PodCertificateRequestStatus } from '../api/pod-certificates.js';
import { CTB_API_VERSION, CTB_KIND } from '../api/trust-bundles.js';
import { generateKeyPair } from '../pki/keys.js';
import { createStubPkcs10Request } from '../pki/pod-certificate-key.js';
import { spiffeIdsOf } from '../pki/spiffe.js';
import type { Credential } from './demo-kubelet.js';

/** A pod the demo plays, bound to the demo's node. */
export interface DemoPod {
  namespace: string;
  name: string;
  uid: string;
  serviceAccountName: string;
  serviceAccountUid: string;
}

/** A pod's key and the chain the signer issued, with the request it answered. */
export interface PodCredential extends Credential {
  pod: DemoPod;
  requestName: string;
  status: PodCertificateRequestStatus;
  spiffeId: string;
}

const NAMESPACE = 'default';

/** The two kinds as client-node's generic object API reads them. */
interface PcrObject extends KubernetesObject {
  status?: PodCertificateRequestStatus;
}
interface TrustBundleObject extends KubernetesObject {
  spec?: { signerName?: string; trustBundle?: string };
}
const code = (err: unknown): number | undefined => (err as { code?: number }).code;

/** The PodCertificateRequest apiVersion the cluster serves (v1, else v1beta1), or undefined. */
export async function servedPodCertificateApiVersion(admin: KubeConfig): Promise<string | undefined> {
  for (const api of [admin.makeApiClient(CertificatesV1Api), admin.makeApiClient(CertificatesV1beta1Api)]) {
    try {
      const list = await api.getAPIResources();
      if (list.resources.some((r) => r.name === PCR_RESOURCE)) return list.groupVersion;
    } catch (err) {
      if (code(err) !== 404) throw err;
    }
  }
  return undefined;
}

/** A service account in the demo namespace, made unless it is there already (a second demo reuses it). */
async function serviceAccount(core: CoreV1Api, name: string): Promise<string> {
  try {
    return (await core.createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name } } })).metadata?.uid ?? '';
  } catch (err) {
    if (code(err) !== 409) throw err;
    return (await core.readNamespacedServiceAccount({ namespace: NAMESPACE, name })).metadata?.uid ?? '';
  }
}

/**
 * Pods bound to `node`, each running as its own service account and mounting a podCertificate volume
 * for `signerName` (NodeRestriction lets a node ask only for the signers its pods' volumes name); made
 * by the admin, as a scheduler would bind them.
 */
export async function createPods(admin: KubeConfig, node: string, accounts: string[], signerName: string): Promise<DemoPod[]> {
  const core = admin.makeApiClient(CoreV1Api);
  const pods: DemoPod[] = [];
  for (const serviceAccountName of accounts) {
    const serviceAccountUid = await serviceAccount(core, serviceAccountName);
    const pod = await core.createNamespacedPod({
      namespace: NAMESPACE,
      body: {
        metadata: { name: `${node}-${serviceAccountName}`, labels: { app: serviceAccountName } },
        spec: {
          nodeName: node,
          serviceAccountName,
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', volumeMounts: [{ name: 'spiffe', mountPath: '/var/run/spiffe' }] }],
          volumes: [{ name: 'spiffe', projected: { sources: [{ podCertificate: { signerName, keyType: 'ECDSAP256', credentialBundlePath: 'credentials.pem' } }] } }],
        },
      },
    });
    pods.push({ namespace: NAMESPACE, name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '', serviceAccountName, serviceAccountUid });
  }
  return pods;
}

/**
 * As the node: a fresh P-256 key and a PodCertificateRequest for `pod` carrying it (the stub PKCS#10
 * is the proof of possession); waits until the signer answers. Denied or Failed is an error naming why.
 */
export async function requestPodCertificate(
  asNode: KubeConfig,
  admin: KubeConfig,
  ask: { apiVersion: string; signerName: string; node: string; nodeUid: string; pod: DemoPod },
  timeoutMs: number,
): Promise<PodCredential> {
  const key = generateKeyPair('ECDSA-P256');
  const stub = await createStubPkcs10Request(key.privateKeyPem);
  const { pod } = ask;
  const body = {
    apiVersion: ask.apiVersion,
    kind: PCR_KIND,
    metadata: { namespace: pod.namespace, generateName: `${pod.name}-` },
    spec: {
      signerName: ask.signerName,
      podName: pod.name,
      podUID: pod.uid,
      serviceAccountName: pod.serviceAccountName,
      serviceAccountUID: pod.serviceAccountUid,
      nodeName: ask.node,
      nodeUID: ask.nodeUid,
      maxExpirationSeconds: 86_400,
      stubPKCS10Request: stub.toString('base64'),
    },
  };
  const created = await KubernetesObjectApi.makeApiClient(asNode).create(body as KubernetesObject);
  const name = created.metadata?.name ?? '';
  const objects = KubernetesObjectApi.makeApiClient(admin);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pcr = await objects.read<PcrObject>({ apiVersion: ask.apiVersion, kind: PCR_KIND, metadata: { name, namespace: pod.namespace } });
    const answer = pcrTerminalCondition(pcr);
    if (answer?.type === 'Issued') {
      const chain = pcr.status?.certificateChain ?? '';
      const [spiffeId = ''] = spiffeIdsOf(new X509Certificate(chain).subjectAltName);
      return { keyPem: key.privateKeyPem, certPem: chain, pod, requestName: name, status: pcr.status ?? {}, spiffeId };
    }
    if (answer) throw new Error(`PodCertificateRequest ${pod.namespace}/${name} was ${answer.type}: ${answer.reason}: ${answer.message}`);
    if (Date.now() > deadline) {
      throw new Error(`PodCertificateRequest ${pod.namespace}/${name} was not answered within ${timeoutMs / 1000}s (is a workload signer running for ${ask.signerName}? kube-identity controller --workload-signer-names ${ask.signerName})`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The CAs the signer publishes, as the pods would read them: ClusterTrustBundles selected by spec.signerName. */
export async function trustBundleOf(kc: KubeConfig, signerName: string): Promise<{ names: string[]; pem: string }> {
  const list = await KubernetesObjectApi.makeApiClient(kc).list<TrustBundleObject>(CTB_API_VERSION, CTB_KIND, undefined, undefined, undefined, undefined, `spec.signerName=${signerName}`);
  const bundles = list.items;
  if (bundles.length === 0) throw new Error(`no ClusterTrustBundle has spec.signerName ${signerName}`);
  return { names: bundles.map((b) => b.metadata?.name ?? ''), pem: bundles.map((b) => b.spec?.trustBundle ?? '').join('\n') };
}

const peerSpiffeId = (cert: PeerCertificate): string => spiffeIdsOf(cert.subjectaltname)[0] ?? '';

/**
 * `server` listens on loopback with its chain and asks for a client certificate; `client` connects;
 * each trusts only `bundle` and accepts only the SPIFFE ID it expects of the other. Resolves to what
 * each side verified; rejects when either refuses.
 */
export async function mutualTls(client: Credential & { spiffeId: string }, server: Credential & { spiffeId: string }, bundle: string): Promise<{ port: number; serverSaw: string; clientSaw: string }> {
  let serverSaw = '';
  const listener = createServer({ key: server.keyPem, cert: server.certPem, ca: bundle, requestCert: true, rejectUnauthorized: true }, (socket: TLSSocket) => {
    serverSaw = peerSpiffeId(socket.getPeerCertificate());
    socket.end(serverSaw === client.spiffeId ? 'hello\n' : 'unexpected peer\n');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  try {
    const clientSaw = await new Promise<string>((resolve, reject) => {
      const socket = connect({
        host: '127.0.0.1',
        port,
        key: client.keyPem,
        cert: client.certPem,
        ca: bundle,
        rejectUnauthorized: true,
        // A SPIFFE peer is named by its URI SAN, not by a host name.
        checkServerIdentity: (_host, cert) => (peerSpiffeId(cert) === server.spiffeId ? undefined : new Error(`server is ${peerSpiffeId(cert) || 'no SPIFFE ID'}, not ${server.spiffeId}`)),
      });
      let reply = '';
      socket.on('data', (c: Buffer) => (reply += c.toString()));
      socket.once('end', () => (reply === 'hello\n' ? resolve(peerSpiffeId(socket.getPeerCertificate())) : reject(new Error(`server said ${JSON.stringify(reply)}`))));
      socket.once('error', reject);
    });
    return { port, serverSaw, clientSaw };
  } finally {
    await new Promise((r) => listener.close(r));
  }
}

/** Whether a client holding `other` (the node's cluster-CA certificate) is refused by a pod that trusts only `bundle`. */
export async function refusesOtherTrustDomain(server: Credential, other: Credential, bundle: string): Promise<boolean> {
  const listener = createServer({ key: server.keyPem, cert: server.certPem, ca: bundle, requestCert: true, rejectUnauthorized: true }, (socket) => socket.end('hello\n'));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  try {
    return await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, key: other.keyPem, cert: other.certPem, rejectUnauthorized: false });
      let reply = '';
      socket.on('data', (c: Buffer) => (reply += c.toString()));
      socket.once('close', () => resolve(reply !== 'hello\n'));
      socket.once('error', () => resolve(true));
    });
  } finally {
    await new Promise((r) => listener.close(r));
  }
}
