/**
 * The identity `up`'s controller acts as, system:kube-identity-controller, as every server's default
 * policy grants it (up's default configuration): in no group, it may do each thing the controller
 * does, and nothing a controller of CSRs has no business doing: no Secrets, no RBAC, no Pods, no
 * tokens, no certificate requests of its own, no signer it does not run, no other Lease or ConfigMap.
 */
import { KUBE_IDENTITY_CONTROLLER_USER } from '../../src/apiserver/authorization/rbac/default-policy.js';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let controller: { certPem: string; keyPem: string };

beforeAll(async () => {
  s = await startTestServer();
  const key = generateKeyPair();
  const ca = { certPem: s.caPem, keyPem: readFileSync(path.join(s.dataDir, 'ca.key'), 'utf8') };
  const certPem = await issueCertificate(ca, {
    subject: { commonName: KUBE_IDENTITY_CONTROLLER_USER },
    publicKeyPem: key.publicKeyPem,
    usages: ['digital signature', 'client auth'],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
  });
  controller = { certPem, keyPem: key.privateKeyPem };
});
afterAll(async () => {
  await s.close();
});

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const asController = (method: string, p: string, body?: unknown): Promise<RawResponse> => raw(s, method, p, { client: controller, body });

async function csr(name: string, signerName: string, subject: { commonName: string; organizations?: string[] }): Promise<Record<string, unknown>> {
  const request = await createCertificateRequestPem({ privateKeyPem: generateKeyPair().privateKeyPem, ...subject });
  const usages = signerName === 'kubernetes.io/kubelet-serving' ? ['digital signature', 'server auth'] : ['digital signature', 'client auth'];
  const c = await raw(s, 'POST', CSRS, { body: { metadata: { name }, spec: { request: Buffer.from(request).toString('base64'), signerName, usages } } });
  expect(c.status).toBe(201);
  return c.json;
}

const approved = (obj: Record<string, unknown>): Record<string, unknown> => ({
  ...obj,
  status: { conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'test' }] },
});

it('is in no group but system:authenticated', async () => {
  const review = await asController('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  expect(review.json.status.userInfo).toMatchObject({ username: KUBE_IDENTITY_CONTROLLER_USER });
  expect(review.json.status.userInfo.groups).toEqual(['system:authenticated']);
});

it('may do what the controller does', async () => {
  const allowed: [string, string, unknown?][] = [
    ['GET', CSRS],
    ['GET', `${CSRS}?watch=1&timeoutSeconds=1`],
    ['GET', '/apis/certificates.k8s.io/v1/podcertificaterequests'],
    ['GET', '/apis/certificates.k8s.io/v1/clustertrustbundles'],
    ['GET', '/api/v1/nodes'],
    ['GET', '/api/v1/namespaces/default/services/kubernetes'],
    ['GET', '/apis/apps/v1/namespaces/kube-system/controllerrevisions'],
    ['POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { user: 'system:node:n1', resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', subresource: 'selfnodeclient', verb: 'create' } } }],
    ['POST', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', { metadata: { name: 'kube-identity-controller' }, spec: { holderIdentity: 'me' } }],
    ['GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-identity-controller'],
    ['POST', '/api/v1/namespaces/kube-system/configmaps', { metadata: { name: 'kube-identity-trust-bundle' }, data: {} }],
    ['GET', '/api/v1/namespaces/kube-system/configmaps/kube-identity-trust-bundle'],
    ['POST', '/api/v1/namespaces/default/events', { metadata: { name: 'e1' }, involvedObject: { kind: 'CertificateSigningRequest', name: 'x' }, reason: 'R', type: 'Normal', message: 'm' }],
  ];
  for (const [method, p, body] of allowed) expect([method, p, (await asController(method, p, body)).status]).toEqual([method, p, method === 'POST' ? 201 : 200]);

  // A kubelet's client certificate: approved through /approval with `approve` on its signer.
  const kubelet = await csr('kubelet-client', 'kubernetes.io/kube-apiserver-client-kubelet', { commonName: 'system:node:n1', organizations: ['system:nodes'] });
  expect((await asController('PUT', `${CSRS}/kubelet-client/approval`, approved(kubelet))).status).toBe(200);
  // The serving approver's signer too (up runs it).
  const serving = await csr('kubelet-serving', 'kubernetes.io/kubelet-serving', { commonName: 'system:node:n1', organizations: ['system:nodes'] });
  expect((await asController('PUT', `${CSRS}/kubelet-serving/approval`, approved(serving))).status).toBe(200);
  expect((await asController('DELETE', `${CSRS}/kubelet-serving`)).status).toBe(200);
});

it('may not read Secrets, write RBAC, run Pods, mint tokens or certificates, or impersonate', async () => {
  const refused: [string, string, unknown?][] = [
    ['GET', '/api/v1/secrets'],
    ['GET', '/api/v1/namespaces/kube-system/secrets'],
    ['POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { metadata: { name: 'mine' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: KUBE_IDENTITY_CONTROLLER_USER }] }],
    ['POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: 'mine' }, rules: [] }],
    ['PUT', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:kube-identity-controller', { metadata: { name: 'system:kube-identity-controller' }, rules: [] }],
    ['POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } }],
    ['POST', '/api/v1/namespaces/default/serviceaccounts/default/token', { spec: {} }],
    ['POST', CSRS, { metadata: { name: 'mine' }, spec: {} }],
    ['DELETE', '/api/v1/namespaces/default'],
    // Its namespace holds only its own Lease and ConfigMap for it; nothing in any other namespace.
    ['GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/someone-else'],
    ['GET', '/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt'],
    ['POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'c' } }],
    ['GET', '/apis/apps/v1/namespaces/default/controllerrevisions'],
  ];
  for (const [method, p, body] of refused) expect([method, p, (await asController(method, p, body)).status]).toEqual([method, p, 403]);
  const impersonating = await raw(s, 'GET', CSRS, { client: controller, headers: { 'Impersonate-User': 'kubernetes-admin', 'Impersonate-Group': 'system:masters' } });
  expect(impersonating.status).toBe(403);
});

it('may not approve or sign for a signer it does not run', async () => {
  // A person's client certificate: only a person approves those; up's controller issues them once approved.
  const person = await csr('person', 'kubernetes.io/kube-apiserver-client', { commonName: 'jane' });
  const approval = await asController('PUT', `${CSRS}/person/approval`, approved(person));
  expect(approval.status).toBe(403);
  expect(approval.json.message).toContain('user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"');
  // Another signer's request, approved by a person: up's controller runs no such signer.
  const other = await csr('other', 'example.com/other', { commonName: 'other' });
  const approvedOther = await raw(s, 'PUT', `${CSRS}/other/approval`, { body: approved(other) });
  expect(approvedOther.status).toBe(200);
  const sign = await asController('PUT', `${CSRS}/other/status`, { ...approvedOther.json, status: { ...approvedOther.json.status, certificate: Buffer.from(controller.certPem).toString('base64') } });
  expect(sign.status).toBe(403);
  expect(sign.json.message).toContain('user not permitted to sign requests with signerName "example.com/other"');
});
