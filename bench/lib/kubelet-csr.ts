/** Kubelet client CSRs as kubelets send them (P-256 key, CN system:node:NAME, O system:nodes), for the load generators. */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import type { HttpClient } from './http-client.js';

export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_CLIENT_USAGES = ['digital signature', 'client auth'];
export const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const tokenPart = (n: number): string => Array.from(randomBytes(n), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');

/** A bootstrap token Secret as kubeadm creates it; returns the token the clients present (system:bootstrappers). */
export async function createBootstrapToken(admin: HttpClient): Promise<string> {
  const id = tokenPart(6);
  const secret = tokenPart(16);
  await admin.json('POST', '/api/v1/namespaces/kube-system/secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data: { 'token-id': b64(id), 'token-secret': b64(secret), 'usage-bootstrap-authentication': b64('true'), 'auth-extra-groups': b64('system:bootstrappers:kubeadm:default-node-token') },
  });
  return `${id}.${secret}`;
}

/** `count` distinct PEM requests for nodes node-0...; keys are generated per request. */
export async function kubeletCsrPems(count: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(await createCertificateRequestPem({ privateKeyPem: generateKeyPair('ECDSA-P256').privateKeyPem, commonName: `system:node:node-${i}`, organizations: ['system:nodes'] }));
  }
  return out;
}

/** The CertificateSigningRequest body a kubelet POSTs. */
export function kubeletCsrObject(name: string, pem: string): object {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(pem).toString('base64'), signerName: KUBELET_CLIENT_SIGNER, usages: KUBELET_CLIENT_USAGES },
  };
}
