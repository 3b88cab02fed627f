import { createCertificateRequestPem, type CreateCsrOptions } from '../../src/pki/csr.js';
import { parseCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import {
  nodeNameOf,
  validateClientUsages,
  validateKubeletClientCsr,
  validateKubeletServingCsr,
} from '../../src/controller/csr/csr-policy.js';

const key = generateKeyPair('ECDSA-P256').privateKeyPem;

async function csr(opts: Omit<CreateCsrOptions, 'privateKeyPem'>) {
  return parseCertificateRequestPem(await createCertificateRequestPem({ privateKeyPem: key, ...opts }));
}

const node = { commonName: 'system:node:worker-1', organizations: ['system:nodes'] };
const clientUsages = ['digital signature', 'client auth'];

describe('kubelet client CSR recognition', () => {
  it.each([
    ['a node identity with digital signature and client auth is a kubelet client CSR', node, clientUsages, undefined],
    [
      'key encipherment is also allowed',
      node,
      ['key encipherment', 'digital signature', 'client auth'],
      undefined,
    ],
    ['usages compare as a set, duplicates included', node, ['client auth', 'digital signature', 'client auth'], undefined],
    [
      'an extra organization is refused',
      { ...node, organizations: ['system:nodes', 'system:masters'] },
      clientUsages,
      'subject organization is not system:nodes',
    ],
    ['no organization is refused', { commonName: node.commonName }, clientUsages, 'subject organization is not system:nodes'],
    ['DNS SANs are refused', { ...node, dnsNames: ['worker-1'] }, clientUsages, 'DNS subjectAltNames are not allowed'],
    [
      'email SANs are refused',
      { ...node, emailAddresses: ['a@example.com'] },
      clientUsages,
      'Email subjectAltNames are not allowed',
    ],
    ['IP SANs are refused', { ...node, ipAddresses: ['10.0.0.1'] }, clientUsages, 'IP subjectAltNames are not allowed'],
    ['URI SANs are refused', { ...node, uris: ['spiffe://x/y'] }, clientUsages, 'URI subjectAltNames are not allowed'],
    [
      'a common name that is not a node is refused',
      { ...node, commonName: 'worker-1' },
      clientUsages,
      'subject common name does not begin with system:node:',
    ],
    [
      'server auth is refused',
      node,
      ['digital signature', 'client auth', 'server auth'],
      'usages did not match [client auth digital signature key encipherment]',
    ],
    ['client auth alone is refused', node, ['client auth'], 'usages did not match [client auth digital signature key encipherment]'],
  ])('%s', async (_name, subject, usages, expected) => {
    expect(validateKubeletClientCsr(await csr(subject), usages)).toBe(expected);
  });
});

describe('kubelet serving CSR rules', () => {
  const serving = ['digital signature', 'key encipherment', 'server auth'];
  it.each([
    ['a node with a DNS name and server usages is accepted', { ...node, dnsNames: ['worker-1.local'] }, serving, undefined],
    ['an IP SAN alone is enough', { ...node, ipAddresses: ['192.0.2.7'] }, serving, undefined],
    ['no SAN at all is refused', node, serving, 'DNS or IP subjectAltName is required'],
    [
      'client auth only is refused',
      { ...node, dnsNames: ['worker-1.local'] },
      clientUsages,
      'usages did not match [digital signature key encipherment server auth]',
    ],
    [
      'the usages are checked before the common name',
      { commonName: 'worker-1', organizations: ['system:nodes'], dnsNames: ['w'] },
      clientUsages,
      'usages did not match [digital signature key encipherment server auth]',
    ],
    [
      'a common name that is not a node is refused',
      { commonName: 'worker-1', organizations: ['system:nodes'], dnsNames: ['w'] },
      serving,
      'subject common name does not begin with system:node:',
    ],
    [
      'URI SANs are refused',
      { ...node, dnsNames: ['w'], uris: ['https://x'] },
      serving,
      'URI subjectAltNames are not allowed',
    ],
  ])('%s', async (_name, subject, usages, expected) => {
    expect(validateKubeletServingCsr(await csr(subject), usages)).toBe(expected);
  });
});

describe('kube-apiserver-client usages', () => {
  it.each([
    ['client auth with digital signature is accepted', ['digital signature', 'client auth'], undefined],
    ['key encipherment is accepted too', ['key encipherment', 'client auth'], undefined],
    ['server auth is refused by name', ['client auth', 'server auth'], 'invalid usage for client certificate: server auth'],
    [
      'client auth is required',
      ['digital signature'],
      'missing required usage for client certificate: client auth',
    ],
  ])('%s', async (_name, usages, expected) => {
    expect(validateClientUsages(await csr({ commonName: 'alice', organizations: ['devs'] }), usages)).toBe(expected);
  });
});

it('nodeNameOf reads the node from a system:node: common name only', async () => {
  expect(nodeNameOf(await csr(node))).toBe('worker-1');
  expect(nodeNameOf(await csr({ commonName: 'alice' }))).toBeUndefined();
});
