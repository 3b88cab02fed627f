/**
 * The recognisers kube-controller-manager applies to CSR contents (pkg/apis/certificates helpers
 * and the signers' pre-sign checks), as pure functions returning the first failure's upstream
 * message, or undefined when the request passes. Both the approver and the signer use them.
 */
import { NODE_USER_PREFIX, NODES_GROUP } from '../../api/nodes.js';
import type { ParsedCsr } from '../../pki/csr.js';


const KUBELET_CLIENT_USAGES = [
  ['digital signature', 'key encipherment', 'client auth'],
  ['digital signature', 'client auth'],
];
export const KUBELET_SERVING_USAGES = [
  ['digital signature', 'key encipherment', 'server auth'],
  ['digital signature', 'server auth'],
];

function sameSet(usages: readonly string[], allowed: readonly string[]): boolean {
  const got = new Set(usages);
  return got.size === allowed.length && allowed.every((u) => got.has(u));
}

export function usagesMatch(usages: readonly string[], sets: string[][]): boolean {
  return sets.some((s) => sameSet(usages, s));
}

/** Go's `%v` of a sorted string slice: `[a b c]`. */
export function goList(values: readonly string[]): string {
  return `[${[...values].sort().join(' ')}]`;
}

function isOnlyNodesOrg(csr: ParsedCsr): boolean {
  const orgs = csr.subject.organizations;
  return orgs.length === 1 && orgs[0] === NODES_GROUP;
}

/** ValidateKubeletClientCSR: what makes a CSR a kubelet's client certificate request. */
export function validateKubeletClientCsr(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  if (!isOnlyNodesOrg(csr)) return 'subject organization is not system:nodes';
  if (csr.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (csr.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (csr.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (csr.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!(csr.subject.commonName ?? '').startsWith(NODE_USER_PREFIX)) {
    return 'subject common name does not begin with system:node:';
  }
  if (!usagesMatch(usages, KUBELET_CLIENT_USAGES)) {
    return `usages did not match ${goList(KUBELET_CLIENT_USAGES[0] ?? [])}`;
  }
  return undefined;
}

/** ValidateKubeletServingCSR: note upstream checks usages before the common name here. */
export function validateKubeletServingCsr(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  if (!isOnlyNodesOrg(csr)) return 'subject organization is not system:nodes';
  if (csr.dnsNames.length === 0 && csr.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (csr.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (csr.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!usagesMatch(usages, KUBELET_SERVING_USAGES)) {
    return `usages did not match ${goList(KUBELET_SERVING_USAGES[0] ?? [])}`;
  }
  if (!(csr.subject.commonName ?? '').startsWith(NODE_USER_PREFIX)) {
    return 'subject common name does not begin with system:node:';
  }
  return undefined;
}

/** The kube-apiserver-client signer: client usages only, and client auth required; no subject rules. */
export function validateClientUsages(_csr: ParsedCsr, usages: readonly string[]): string | undefined {
  for (const u of usages) {
    if (u !== 'digital signature' && u !== 'key encipherment' && u !== 'client auth') {
      return `invalid usage for client certificate: ${u}`;
    }
  }
  if (!usages.includes('client auth')) return 'missing required usage for client certificate: client auth';
  return undefined;
}

/** The node name a kubelet CSR speaks for, or undefined when the CN is not a node identity. */
export function nodeNameOf(csr: ParsedCsr): string | undefined {
  const cn = csr.subject.commonName ?? '';
  return cn.startsWith(NODE_USER_PREFIX) ? cn.slice(NODE_USER_PREFIX.length) : undefined;
}
