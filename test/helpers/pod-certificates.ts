/**
 * PodCertificateRequests for tests: real keys (node:crypto), real stub PKCS#10 requests and proofs of
 * possession, a cluster of node + ServiceAccount + pod to ask for, and certificates issued by a real CA.
 */
import crypto from 'node:crypto';
import type { PodCertificateRequestSpecV1 } from '../../src/api/pod-certificates.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { issueCertificate } from '../../src/pki/issue.js';
import type { CaMaterial } from '../../src/pki/signer.js';
import { createStubPkcs10Request, signProofOfPossession } from '../../src/pki/pod-certificate-key.js';
import { raw, type RawResponse } from './http.js';
import type { TestServer } from './server.js';

export const G = 'certificates.k8s.io';
export const pcrPath = (version: string, namespace: string, name = ''): string =>
  `/apis/${G}/${version}/namespaces/${namespace}/podcertificaterequests${name ? `/${name}` : ''}`;

export type TestKeyKind = 'ECDSAP256' | 'ECDSAP384' | 'ECDSAP521' | 'ED25519' | 'RSA3072' | 'RSA2048' | 'ECDSAP224';

export interface TestKey {
  privateKey: crypto.KeyObject;
  privateKeyPem: string;
  /** SubjectPublicKeyInfo DER. */
  spki: Buffer;
}

const CURVES: Partial<Record<TestKeyKind, string>> = { ECDSAP256: 'P-256', ECDSAP384: 'P-384', ECDSAP521: 'P-521', ECDSAP224: 'P-224' };

export function testKey(kind: TestKeyKind): TestKey {
  const pair = CURVES[kind]
    ? crypto.generateKeyPairSync('ec', { namedCurve: CURVES[kind] })
    : kind === 'ED25519'
      ? crypto.generateKeyPairSync('ed25519')
      : crypto.generateKeyPairSync('rsa', { modulusLength: kind === 'RSA2048' ? 2048 : 3072 });
  return {
    privateKey: pair.privateKey,
    privateKeyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    spki: pair.publicKey.export({ type: 'spki', format: 'der' }),
  };
}

/** Who the request is for: the names and UIDs a kubelet copies from the pod, and its namespace. */
export type PodIdentity = { namespace: string } & Pick<
  PodCertificateRequestSpecV1,
  'podName' | 'podUID' | 'serviceAccountName' | 'serviceAccountUID' | 'nodeName' | 'nodeUID'
>;

export interface PcrOptions {
  name: string;
  signerName?: string;
  version?: 'v1' | 'v1beta1';
  maxExpirationSeconds?: number;
  /** Also send the deprecated pkixPublicKey + proofOfPossession (v1beta1). */
  legacy?: boolean;
  /** Overrides of the spec, applied last. */
  spec?: Record<string, unknown>;
}

/** A PodCertificateRequest body as a kubelet would send it, for `key`. */
export async function pcrBody(id: PodIdentity, key: TestKey, o: PcrOptions): Promise<Record<string, unknown>> {
  const spec: Record<string, unknown> = {
    signerName: o.signerName ?? 'example.com/workload',
    podName: id.podName,
    podUID: id.podUID,
    serviceAccountName: id.serviceAccountName,
    serviceAccountUID: id.serviceAccountUID,
    nodeName: id.nodeName,
    nodeUID: id.nodeUID,
    stubPKCS10Request: (await createStubPkcs10Request(key.privateKeyPem)).toString('base64'),
  };
  if (o.maxExpirationSeconds !== undefined) spec.maxExpirationSeconds = o.maxExpirationSeconds;
  if (o.legacy) {
    spec.pkixPublicKey = key.spki.toString('base64');
    spec.proofOfPossession = signProofOfPossession(key.privateKey, id.podUID).toString('base64');
  }
  return {
    apiVersion: `${G}/${o.version ?? 'v1'}`,
    kind: 'PodCertificateRequest',
    metadata: { name: o.name, namespace: id.namespace },
    spec: { ...spec, ...o.spec },
  };
}

/** Creates (as admin) a node, a ServiceAccount and a pod bound to the node, with podCertificate volumes for `signers`. */
export async function podOnNode(srv: TestServer, namespace: string, podName: string, nodeName: string, signers: string[]): Promise<PodIdentity> {
  const ok = async (p: Promise<RawResponse>, allowExisting = false): Promise<RawResponse> => {
    const r = await p;
    if (r.status >= 300 && !(allowExisting && r.status === 409)) throw new Error(`setup failed: ${r.status} ${r.text}`);
    return r;
  };
  await ok(raw(srv, 'POST', '/api/v1/namespaces', { body: { metadata: { name: namespace } } }), true);
  await ok(raw(srv, 'POST', '/api/v1/nodes', { body: { metadata: { name: nodeName } } }), true);
  await ok(raw(srv, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { body: { metadata: { name: 'workload' } } }), true);
  const node = await ok(raw(srv, 'GET', `/api/v1/nodes/${nodeName}`));
  const sa = await ok(raw(srv, 'GET', `/api/v1/namespaces/${namespace}/serviceaccounts/workload`));
  const sources = signers.map((signerName) => ({ podCertificate: { signerName, keyType: 'ECDSAP256', credentialBundlePath: 'bundle.pem' } }));
  const pod = await ok(
    raw(srv, 'POST', `/api/v1/namespaces/${namespace}/pods`, {
      body: {
        metadata: { name: podName },
        spec: {
          nodeName,
          serviceAccountName: 'workload',
          containers: [{ name: 'c', image: 'x' }],
          volumes: sources.length > 0 ? [{ name: 'certs', projected: { sources } }] : [],
        },
      },
    }),
  );
  return {
    namespace,
    podName,
    podUID: String(pod.json.metadata.uid),
    serviceAccountName: 'workload',
    serviceAccountUID: String(sa.json.metadata.uid),
    nodeName,
    nodeUID: String(node.json.metadata.uid),
  };
}

export const testCa = (): Promise<CaMaterial> => createCertificateAuthority({ commonName: 'workload-ca' });

/** A leaf for `key` valid from `notBefore` (whole seconds) for `lifetimeSeconds`. */
export function leafFor(ca: CaMaterial, key: TestKey, notBefore: Date, lifetimeSeconds: number, dnsNames: string[] = []): Promise<string> {
  return issueCertificate(ca, {
    subject: { commonName: '' },
    publicKeyDer: key.spki,
    dnsNames,
    uris: ['spiffe://cluster.local/ns/test/sa/workload'],
    usages: ['digital signature', 'client auth', 'server auth'],
    notBefore,
    notAfter: new Date(notBefore.getTime() + lifetimeSeconds * 1000),
  });
}

/** RFC 3339 with second precision, as metav1.Time travels. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Now, truncated to the second (certificate times have second precision). */
export const wholeSecondNow = (): Date => new Date(Math.floor(Date.now() / 1000) * 1000);
