/**
 * A node asking for another node's certificate, through the real server: NodeRestriction refuses a
 * node's CSR for a kubelet signer (client or serving) unless its CN is the node's own
 * `system:node:NAME` (upstream since 1.34, AllowInsecureKubeletCertificateSigningRequests off), so
 * one mistaken `kubectl certificate approve` can never hand node-a node-b's identity. Other
 * signers, and the same requests from a non-node, are not its concern.
 */
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubeletClientCert } from '../helpers/kubelet-cert.js';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const CLIENT = { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] };
const SERVING = { signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'] };

let server: TestServer;
let nodeA: { certPem: string; keyPem: string };

/** A CSR object for a real PKCS#10 request with subject CN=`cn`, O=system:nodes. */
async function csr(name: string, cn: string, signer: { signerName: string; usages: string[] }, ipAddresses?: string[]): Promise<Record<string, unknown>> {
  const pem = await createCertificateRequestPem({ privateKeyPem: generateKeyPair().privateKeyPem, commonName: cn, organizations: ['system:nodes'], ipAddresses });
  return { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request: Buffer.from(pem).toString('base64'), ...signer } };
}

const outcome = (r: RawResponse): [number, unknown] => [r.status, r.status === 201 ? r.json?.spec?.username : r.json?.message];

beforeAll(async () => {
  server = await startTestServer();
  nodeA = await kubeletClientCert(server, 'node-a');
}, 60_000);
afterAll(async () => server?.close());

it('refuses a node a client or serving CSR naming another node, with upstream\'s text', async () => {
  for (const [name, signer] of [['a-for-b-client', CLIENT], ['a-for-b-serving', SERVING]] as const) {
    const res = await raw(server, 'POST', CSRS, { client: nodeA, body: await csr(name, 'system:node:node-b', signer, signer === SERVING ? ['10.244.2.2'] : undefined) });
    expect(outcome(res)).toEqual([403, `certificatesigningrequests.certificates.k8s.io "${name}" is forbidden: can only create a node CSR with CN=system:node:node-a`]);
    expect((await raw(server, 'GET', `${CSRS}/${name}`)).status).toBe(404);
  }
});

it('refuses a CN that only starts with the node\'s own name', async () => {
  const res = await raw(server, 'POST', CSRS, { client: nodeA, body: await csr('a-prefix', 'system:node:node-a-evil', CLIENT) });
  expect(outcome(res)).toEqual([403, 'certificatesigningrequests.certificates.k8s.io "a-prefix" is forbidden: can only create a node CSR with CN=system:node:node-a']);
});

it('lets a node ask in its own name, and for other signers in any name', async () => {
  expect(outcome(await raw(server, 'POST', CSRS, { client: nodeA, body: await csr('a-client', 'system:node:node-a', CLIENT) }))).toEqual([201, 'system:node:node-a']);
  expect(outcome(await raw(server, 'POST', CSRS, { client: nodeA, body: await csr('a-serving', 'system:node:node-a', SERVING, ['10.244.1.1']) }))).toEqual([201, 'system:node:node-a']);
  const other = { signerName: 'example.com/anything', usages: ['digital signature', 'client auth'] };
  expect(outcome(await raw(server, 'POST', CSRS, { client: nodeA, body: await csr('a-other', 'system:node:node-b', other) }))).toEqual([201, 'system:node:node-a']);
});

it('leaves a non-node (the admin) free to ask for any node', async () => {
  expect(outcome(await raw(server, 'POST', CSRS, { body: await csr('admin-for-b', 'system:node:node-b', CLIENT) }))).toEqual([201, 'kubernetes-admin']);
});
