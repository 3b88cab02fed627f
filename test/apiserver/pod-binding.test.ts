/**
 * pods/binding, as kube-apiserver's: the one way to set a pod's node, once; who may bind is RBAC's
 * `create` on pods/binding, which a namespace user with every verb on pods does not have.
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor } from '../kubectl/kubectl.js';

const NS = '/api/v1/namespaces/default';
const RBAC = '/apis/rbac.authorization.k8s.io/v1/namespaces/default';
let srv: TestServer;
const admin = (method: string, path: string, body?: unknown): Promise<RawResponse> => raw(srv, method, path, { body });
const alice = (method: string, path: string, body?: unknown): Promise<RawResponse> =>
  raw(srv, method, path, { token: 'alice-token', body, contentType: method === 'PATCH' ? 'application/merge-patch+json' : undefined });
const binding = (pod: string, node: string, meta: Record<string, unknown> = {}): unknown => ({
  apiVersion: 'v1',
  kind: 'Binding',
  metadata: { name: pod, ...meta },
  target: { apiVersion: 'v1', kind: 'Node', name: node },
});
const pod = async (name: string, spec: Record<string, unknown> = {}): Promise<RawResponse> => {
  const r = await admin('POST', `${NS}/pods`, { metadata: { name }, spec: { containers: [{ name: 'c', image: 'x' }], ...spec } });
  expect(r.status).toBe(201);
  return r;
};

beforeAll(async () => {
  srv = await startTestServer({ tokenFile: 'alice-token,alice,uid-alice,"system:authenticated"\n' });
  // alice may do anything to pods, as a namespace's admin role allows: that is not pods/binding.
  expect((await admin('POST', `${RBAC}/roles`, { metadata: { name: 'pods' }, rules: [{ apiGroups: [''], resources: ['pods', 'pods/status'], verbs: ['*'] }] })).status).toBe(201);
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pods' };
  const subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }];
  expect((await admin('POST', `${RBAC}/rolebindings`, { metadata: { name: 'alice' }, roleRef, subjects })).status).toBe(201);
}, 60_000);
afterAll(async () => srv?.close());

it('binds an unbound pod once: nodeName, the binding annotations and PodScheduled, answered with a Success Status', async () => {
  await pod('p1');
  const r = await admin('POST', `${NS}/pods/p1/binding`, binding('p1', 'node-a', { annotations: { 'scheduler/decision': 'x' } }));
  expect([r.status, r.json]).toEqual([201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }]);
  const bound = (await admin('GET', `${NS}/pods/p1`)).json;
  expect([bound.spec.nodeName, bound.metadata.annotations]).toEqual(['node-a', { 'scheduler/decision': 'x' }]);
  expect(bound.status.conditions).toEqual([{ type: 'PodScheduled', status: 'True', lastTransitionTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) }]);
  const again = await admin('POST', `${NS}/pods/p1/binding`, binding('p1', 'node-b'));
  expect([again.status, again.json.reason, again.json.message]).toEqual([409, 'Conflict', 'Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "node-a"']);
  expect((await admin('GET', `${NS}/pods/p1`)).json.spec.nodeName).toBe('node-a');
});

it('refuses what upstream refuses: a name other than the URL, a target that is no Node, a stale uid, a missing or gated pod', async () => {
  const p2 = (await pod('p2')).json;
  const wrongName = await admin('POST', `${NS}/pods/p2/binding`, binding('p1', 'node-a'));
  expect([wrongName.status, wrongName.json.message]).toEqual([400, 'name in URL does not match name in Binding object']);
  const noTarget = await admin('POST', `${NS}/pods/p2/binding`, { ...(binding('p2', '') as object), target: { kind: 'Service', name: '' } });
  expect([noTarget.status, noTarget.json.reason, noTarget.json.details.causes.map((c: { field: string }) => c.field)]).toEqual([422, 'Invalid', ['target.kind', 'target.name']]);
  const staleUid = await admin('POST', `${NS}/pods/p2/binding`, binding('p2', 'node-a', { uid: 'not-the-uid' }));
  expect([staleUid.status, staleUid.json.message]).toEqual([409, `Operation cannot be fulfilled on pods "p2": StorageError: invalid object, Code: 4, Key: /registry/pods/default/p2, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${String(p2.metadata.uid)}`]);
  const staleRv = await admin('POST', `${NS}/pods/p2/binding`, binding('p2', 'node-a', { resourceVersion: '1' }));
  expect([staleRv.status, staleRv.json.message]).toEqual([
    409,
    `Operation cannot be fulfilled on pods "p2": StorageError: invalid object, Code: 4, Key: /registry/pods/default/p2, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${String(p2.metadata.resourceVersion)}`,
  ]);
  expect((await admin('POST', `${NS}/pods/missing/binding`, binding('missing', 'node-a'))).status).toBe(404);
  await pod('gated', { schedulingGates: [{ name: 'wait' }] });
  const gated = await admin('POST', `${NS}/pods/gated/binding`, binding('gated', 'node-a'));
  expect([gated.status, gated.json.message]).toEqual([409, 'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates']);
  const dry = await admin('POST', `${NS}/pods/p2/binding?dryRun=All`, binding('p2', 'node-a', { uid: p2.metadata.uid }));
  expect(dry.status).toBe(201);
  expect((await admin('GET', `${NS}/pods/p2`)).json.spec.nodeName).toBeUndefined();
});

it('keeps a namespace user with every verb on pods from binding one, or moving a bound one to another node', async () => {
  await pod('p3');
  const denied = await alice('POST', `${NS}/pods/p3/binding`, binding('p3', 'node-a'));
  expect([denied.status, denied.json.message]).toEqual([403, 'pods "p3" is forbidden: User "alice" cannot create resource "pods/binding" in API group "" in the namespace "default"']);
  expect((await alice('PATCH', `${NS}/pods/p3`, { spec: { nodeName: 'node-a' } })).status).toBe(422);
  expect((await admin('POST', `${NS}/pods/p3/binding`, binding('p3', 'node-a'))).status).toBe(201);
  expect((await alice('PATCH', `${NS}/pods/p3`, { spec: { nodeName: 'node-b' } })).status).toBe(422);
  expect((await alice('DELETE', `${NS}/pods/p3`)).status).toBe(200);
});

it('is in discovery and in kubectl auth can-i, as upstream serves it', async () => {
  const core = (await admin('GET', '/api/v1')).json.resources.find((r: { name: string }) => r.name === 'pods/binding');
  expect(core).toEqual({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
  const kubectl = kubectlFor(srv);
  expect((await kubectl('auth', 'can-i', 'create', 'pods', '--subresource=binding', '--as', 'alice')).stdout.trim()).toBe('no');
  expect((await kubectl('auth', 'can-i', 'create', 'pods', '--subresource=binding')).stdout.trim()).toBe('yes');
});
