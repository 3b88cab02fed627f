/**
 * Mirror pods through the real server, as a kubelet makes them: a node (its `system:node:NAME`
 * client certificate in system:nodes) may create only a mirror pod bound to itself, owned by its
 * own Node object alone, naming no ServiceAccount, Secret, ConfigMap, ClusterTrustBundle or PVC
 * (NodeRestriction's admitPodCreate upstream). Whoever creates a mirror pod, it gets no default
 * ServiceAccount and may name none, nor a Secret, nor project a token, while any other pod still
 * gets the default account (upstream's ServiceAccount admission, which runs before NodeRestriction
 * and so answers first for the account and Secrets).
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubeletClientCert } from '../helpers/kubelet-cert.js';

const NS = '/api/v1/namespaces/default';
let server: TestServer;
let nodeUid = '';
const nodeCerts: Record<string, { certPem: string; keyPem: string }> = {};

const admin = (method: string, p: string, body?: unknown): Promise<RawResponse> => raw(server, method, p, { body });
const as = (node: string) => (method: string, p: string, body?: unknown): Promise<RawResponse> =>
  raw(server, method, p, { client: nodeCerts[node], body });
const nodeA = as('node-a');

/** A mirror pod as node-a's kubelet writes it, with `spec` merged over a bare container. */
function mirrorPod(name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      annotations: { 'kubernetes.io/config.mirror': 'hash' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: nodeUid, controller: true }],
      ...metadata,
    },
    spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }], ...spec },
  };
}

const refusal = (r: RawResponse): [number, unknown, unknown] => [r.status, r.json?.reason, r.json?.message];
const forbidden = (name: string, message: string): [number, string, string] => [403, 'Forbidden', `pods "${name}" is forbidden: ${message}`];

beforeAll(async () => {
  server = await startTestServer();
  nodeCerts['node-a'] = await kubeletClientCert(server, 'node-a');
  nodeCerts['node-b'] = await kubeletClientCert(server, 'node-b');
  const created = await nodeA('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } });
  if (created.status !== 201) throw new Error(`setup failed: ${created.status} ${created.text}`);
  nodeUid = String(created.json?.metadata?.uid);
}, 60_000);
afterAll(async () => server?.close());

it('lets a node create its mirror pod, which gets no default ServiceAccount', async () => {
  const res = await nodeA('POST', `${NS}/pods`, mirrorPod('static-web'));
  expect(res.status).toBe(201);
  const stored = (await admin('GET', `${NS}/pods/static-web`)).json?.spec;
  expect({ serviceAccountName: stored?.serviceAccountName, serviceAccount: stored?.serviceAccount }).toEqual({ serviceAccountName: undefined, serviceAccount: undefined });
});

it('binds no service-account token to a mirror pod, which runs as no account', async () => {
  const uid = String((await admin('GET', `${NS}/pods/static-web`)).json?.metadata?.uid);
  const request = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'static-web', uid } } };
  const res = await admin('POST', `${NS}/serviceaccounts/default/token`, request);
  expect([res.status, res.json?.message]).toEqual([400, 'cannot bind token for serviceaccount "default" to pod running with different serviceaccount name.']);
});

it('still gives any other pod the default ServiceAccount', async () => {
  const res = await admin('POST', `${NS}/pods`, { metadata: { name: 'ordinary' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
  expect(res.status).toBe(201);
  expect(res.json?.spec).toMatchObject({ serviceAccountName: 'default', serviceAccount: 'default' });
});

const TOKEN_PROJECTION = { volumes: [{ name: 'v', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }] };

it('refuses a node\'s mirror pod that names a ServiceAccount (by either field) or a Secret, or projects a token', async () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['sa', { serviceAccountName: 'default' }, 'a mirror pod may not reference service accounts'],
    ['sa-old', { serviceAccount: 'default' }, 'a mirror pod may not reference service accounts'],
    ['secret-csi', { volumes: [{ name: 'v', csi: { driver: 'd', nodePublishSecretRef: { name: 's' } } }] }, 'a mirror pod may not reference secrets'],
    ['secret-env', { containers: [{ name: 'c', image: 'x', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] }, 'a mirror pod may not reference secrets'],
    ['token', TOKEN_PROJECTION, 'a mirror pod may not use ServiceAccountToken volume projections'],
  ];
  for (const [name, spec, message] of cases) expect(refusal(await nodeA('POST', `${NS}/pods`, mirrorPod(name, spec)))).toEqual(forbidden(name, message));
  expect((await admin('GET', `${NS}/pods/sa`)).status).toBe(404);
});

it('refuses the same mirror pods from a user who may create any pod, and gives theirs no default ServiceAccount', async () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['admin-sa', { serviceAccountName: 'default' }, 'a mirror pod may not reference service accounts'],
    ['admin-secret', { imagePullSecrets: [{ name: 'pull' }] }, 'a mirror pod may not reference secrets'],
    ['admin-token', TOKEN_PROJECTION, 'a mirror pod may not use ServiceAccountToken volume projections'],
  ];
  for (const [name, spec, message] of cases) expect(refusal(await admin('POST', `${NS}/pods`, mirrorPod(name, spec)))).toEqual(forbidden(name, message));
  const plain = await admin('POST', `${NS}/pods`, mirrorPod('admin-plain'));
  expect([plain.status, plain.json?.spec?.serviceAccountName]).toEqual([201, undefined]);
});

it('refuses a node\'s mirror pod that names a ConfigMap, a ClusterTrustBundle or a PVC', async () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['cm', { volumes: [{ name: 'v', projected: { sources: [{ configMap: { name: 'cm' } }] } }] }, 'configmaps'],
    ['ctb', { volumes: [{ name: 'v', projected: { sources: [{ clusterTrustBundle: { signerName: 'example.com/s', path: 'b.pem' } }] } }] }, 'clustertrustbundles'],
    ['pvc', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] }, 'persistentvolumeclaims'],
  ];
  for (const [name, spec, kind] of cases) {
    expect(refusal(await nodeA('POST', `${NS}/pods`, mirrorPod(name, spec)))).toEqual(forbidden(name, `node "node-a" can not create pods that reference ${kind}`));
  }
});

it('lets a node create only mirror pods bound to itself', async () => {
  expect(refusal(await nodeA('POST', `${NS}/pods`, mirrorPod('elsewhere', { nodeName: 'node-b' })))).toEqual(
    forbidden('elsewhere', 'node "node-a" can only create pods with spec.nodeName set to itself'),
  );
  expect(refusal(await nodeA('POST', `${NS}/pods`, mirrorPod('unbound', { nodeName: undefined })))).toEqual(
    forbidden('unbound', 'node "node-a" can only create pods with spec.nodeName set to itself'),
  );
  // node-b's kubelet has no Node object yet: a mirror pod it owns cannot be checked, so it is not created.
  const other = mirrorPod('on-b', { nodeName: 'node-b' }, { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-b', uid: 'x', controller: true }] });
  expect((await as('node-b')('POST', `${NS}/pods`, other)).status).toBe(404);
});

it('lets a mirror pod be owned only by its Node, as controller, with the Node\'s uid', async () => {
  const owner = { apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: nodeUid, controller: true };
  const cases: [string, unknown[], string][] = [
    ['no-owner', [], 'node "node-a" can only create pods with an owner reference set to itself'],
    ['two-owners', [owner, { ...owner, name: 'node-b', controller: false }], 'node "node-a" can only create pods with a single owner reference set to itself'],
    ['other-node', [{ ...owner, name: 'node-b' }], 'node "node-a" can only create pods with an owner reference set to itself'],
    ['not-a-node', [{ ...owner, apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'node-a' }], 'node "node-a" can only create pods with an owner reference set to itself'],
    ['not-controller', [{ ...owner, controller: false }], 'node "node-a" can only create pods with a controller owner reference set to itself'],
    ['blocking', [{ ...owner, blockOwnerDeletion: true }], 'node "node-a" must not set blockOwnerDeletion on an owner reference'],
    ['stale-uid', [{ ...owner, uid: 'stale' }], `node node-a UID mismatch: expected stale got ${nodeUid}`],
  ];
  for (const [name, ownerReferences, message] of cases) {
    expect(refusal(await nodeA('POST', `${NS}/pods`, mirrorPod(name, {}, { ownerReferences })))).toEqual(forbidden(name, message));
  }
});
