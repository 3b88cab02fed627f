/** Kubelet client CSRs as kubelets send them (P-256 key, CN system:node:NAME, O system:nodes), for the load generators. */
import 'reflect-metadata';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';

export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_CLIENT_USAGES = ['digital signature', 'client auth'];

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
