/**
 * What the workload signer's suites need around the harness: a node with pods bound to it (each with
 * podCertificate volumes, as NodeRestriction requires) and that node creating PodCertificateRequests
 * for them, as its kubelet would.
 */
import crypto from 'node:crypto';
import type { PodCertificateRequest } from '../../src/api/pod-certificates.js';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import { waitFor, type Harness } from './harness.js';

export const PCRS = '/apis/certificates.k8s.io/v1/namespaces/default/podcertificaterequests';
/** The node the harness's `node9` token authenticates as. */
const NODE = 'worker-9';

export const ecKey = (): string => crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

export class PodWorld {
  private readonly uids: Record<string, string> = {};

  constructor(private readonly h: Harness) {}

  /** Creates as the admin; returns the new object's uid. */
  async create(urlPath: string, body: Record<string, unknown>): Promise<string> {
    const res = await this.h.call('admin', 'POST', urlPath, body);
    if (res.status !== 201) throw new Error(`${urlPath}: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body.metadata as { uid: string }).uid;
  }

  /** The node and the service accounts in `default`. */
  async setUp(serviceAccounts: string[]): Promise<void> {
    this.uids[`node:${NODE}`] = await this.create('/api/v1/nodes', { metadata: { name: NODE } });
    for (const sa of serviceAccounts) this.uids[`sa:${sa}`] = await this.create('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: sa } });
  }

  /** A pod bound to the node running as `serviceAccount`, with a podCertificate volume for each of `signers`. */
  async pod(name: string, serviceAccount: string, signers: string[]): Promise<void> {
    const sources = signers.map((signerName, i) => ({ podCertificate: { signerName, keyType: 'ECDSAP256', credentialBundlePath: `credential-${i}.pem` } }));
    this.uids[name] = await this.create('/api/v1/namespaces/default/pods', {
      metadata: { name },
      spec: {
        nodeName: NODE,
        serviceAccountName: serviceAccount,
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', volumeMounts: [{ name: 'identity', mountPath: '/var/run/identity' }] }],
        volumes: [{ name: 'identity', projected: { sources } }],
      },
    });
  }

  /** As the node: a request for `podName`'s certificate, with a stub PKCS#10 of `privateKeyPem`; returns its name. */
  async requestFor(podName: string, serviceAccount: string, privateKeyPem: string, more: { signerName: string; maxExpirationSeconds?: number }): Promise<string> {
    // What the requester could put in the stub request: names of its choosing, which must never reach the certificate.
    const stub = await createCertificateRequestPem({ privateKeyPem, commonName: 'admin', dnsNames: ['kubernetes.default.svc'], uris: ['spiffe://example.org/ns/kube-system/sa/admin'] });
    const res = await this.h.call('node9', 'POST', PCRS, {
      metadata: { generateName: `${podName}-` },
      spec: {
        signerName: more.signerName,
        podName,
        podUID: this.uids[podName],
        serviceAccountName: serviceAccount,
        serviceAccountUID: this.uids[`sa:${serviceAccount}`],
        nodeName: NODE,
        nodeUID: this.uids[`node:${NODE}`],
        maxExpirationSeconds: more.maxExpirationSeconds ?? 36_000,
        stubPKCS10Request: Buffer.from(decodePemBlocks(stub)[0]?.der ?? []).toString('base64'),
      },
    });
    if (res.status !== 201) throw new Error(`create request: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body.metadata as { name: string }).name;
  }

  /** The request once it carries a condition. */
  async answered(name: string): Promise<PodCertificateRequest> {
    return waitFor(`an answer to ${name}`, async () => {
      const res = await this.h.call('admin', 'GET', `${PCRS}/${name}`);
      const pcr = res.body as unknown as PodCertificateRequest;
      return (pcr.status?.conditions ?? []).length > 0 ? pcr : undefined;
    });
  }
}
