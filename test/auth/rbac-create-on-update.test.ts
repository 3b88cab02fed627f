/**
 * A PUT to a Role, ClusterRole, RoleBinding or ClusterRoleBinding that does not exist creates it, as
 * upstream's RBAC strategies allow (kubectl replace, client-go Update, RBAC reconcilers). The create
 * goes through what a POST does: the `create` verb, escalation prevention, a fresh object's metadata;
 * it is audited as the update it was sent as.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { byId, eventsWhen, logAudit } from '../audit/helpers.js';
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { rbacObjects } from '../helpers/rbac-objects.js';

const G = 'rbac.authorization.k8s.io';
const API = `/apis/${G}/v1`;
const NS = 'put-team';

let srv: TestServer;
let auditDir: string;
let auditLog: string;
const as = (user: string, method: string, path: string, body?: unknown): Promise<RawResponse> =>
  raw(srv, method, path, { body, headers: user === 'admin' ? {} : { 'Impersonate-User': user } });
const created = async (r: Promise<RawResponse>): Promise<RawResponse> => {
  const res = await r;
  expect([res.status, res.json?.message]).toEqual([201, undefined]);
  return res;
};
const { role, binding } = rbacObjects(NS);
const PODS_READ = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }];

beforeAll(async () => {
  auditDir = mkdtempSync(path.join(os.tmpdir(), 'rbac-create-on-update-'));
  auditLog = path.join(auditDir, 'audit.log');
  const policy = path.join(auditDir, 'policy.yaml');
  writeFileSync(policy, `apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: RequestResponse\n  resources: [{group: ${G}}]\n`);
  srv = await startTestServer({ audit: logAudit(policy, auditLog) });
  await created(as('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
  // pat may create and update roles and rolebindings in the namespace, and read pods there; uma may only update and patch roles.
  const writer = [
    { apiGroups: [G], resources: ['roles', 'rolebindings'], verbs: ['create', 'update'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
  ];
  await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('writer', writer)));
  await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('pat-writer', 'Role', 'writer', 'pat')));
  await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('updater', [{ apiGroups: [G], resources: ['roles'], verbs: ['update', 'patch'] }])));
  await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('uma-updater', 'Role', 'updater', 'uma')));
});
afterAll(async () => {
  await srv?.close();
  rmSync(auditDir, { recursive: true, force: true });
});

it('creates each of the four kinds through PUT with the metadata of a create', async () => {
  const cluster = (o: Record<string, unknown>, kind: string): Record<string, unknown> => ({ ...o, kind, metadata: { name: (o.metadata as { name: string }).name } });
  const writes: [string, Record<string, unknown>][] = [
    [`${API}/namespaces/${NS}/roles/put-role`, role('put-role', PODS_READ)],
    [`${API}/clusterroles/put-clusterrole`, role('put-clusterrole', PODS_READ, 'ClusterRole')],
    [`${API}/namespaces/${NS}/rolebindings/put-binding`, binding('put-binding', 'Role', 'put-role', 'someone')],
    [`${API}/clusterrolebindings/put-clusterbinding`, cluster(binding('put-clusterbinding', 'ClusterRole', 'put-clusterrole', 'someone'), 'ClusterRoleBinding')],
  ];
  for (const [path, body] of writes) {
    const put = await created(as('admin', 'PUT', path, body));
    const m = put.json.metadata;
    expect(m.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(m.creationTimestamp)).not.toBeNaN();
    const got = await as('admin', 'GET', path);
    expect([got.status, got.json.metadata.resourceVersion, got.json.metadata.uid]).toEqual([200, m.resourceVersion, m.uid]);
    // The second PUT is an update of what the first created.
    const again = await as('admin', 'PUT', path, { ...body, metadata: { ...(body.metadata as object), labels: { v: '2' } } });
    expect([again.status, again.json.metadata.uid, again.json.metadata.labels]).toEqual([200, m.uid, { v: '2' }]);
  }
});

it('creates despite a resourceVersion in the body, as upstream (its storage drops it before a create)', async () => {
  const path = `${API}/namespaces/${NS}/roles/with-rv`;
  const res = await created(as('admin', 'PUT', path, { ...role('with-rv', PODS_READ), metadata: { name: 'with-rv', namespace: NS, resourceVersion: '12345' } }));
  expect(res.json.metadata.resourceVersion).not.toBe('12345');
  // On an object that exists, the same resourceVersion is the usual precondition.
  const stale = await as('admin', 'PUT', path, { ...role('with-rv', PODS_READ), metadata: { name: 'with-rv', namespace: NS, resourceVersion: '12345' } });
  expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
});

it('applies escalation prevention to a PUT that creates exactly as to a POST', async () => {
  const wider = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }];
  const posted = await as('pat', 'POST', `${API}/namespaces/${NS}/roles`, role('secret-reader', wider));
  const put = await as('pat', 'PUT', `${API}/namespaces/${NS}/roles/secret-reader`, role('secret-reader', wider));
  expect(posted.status).toBe(403);
  expect([put.status, put.json.reason, put.json.message]).toEqual([403, 'Forbidden', posted.json.message]);
  expect(put.json.message).toContain('is attempting to grant RBAC permissions not currently held');
  expect((await as('admin', 'GET', `${API}/namespaces/${NS}/roles/secret-reader`)).status).toBe(404);

  await created(as('pat', 'PUT', `${API}/namespaces/${NS}/roles/pod-getter`, role('pod-getter', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }])));

  const toAdmin = binding('pat-admin', 'ClusterRole', 'cluster-admin', 'pat');
  const postedBinding = await as('pat', 'POST', `${API}/namespaces/${NS}/rolebindings`, toAdmin);
  const putBinding = await as('pat', 'PUT', `${API}/namespaces/${NS}/rolebindings/pat-admin`, toAdmin);
  expect(postedBinding.status).toBe(403);
  expect([putBinding.status, putBinding.json.message]).toEqual([403, postedBinding.json.message]);
  expect((await as('admin', 'GET', `${API}/namespaces/${NS}/rolebindings/pat-admin`)).status).toBe(404);
});

it('asks escalate with the URL name, as upstream: a grant for one role name covers a PUT that creates it, not a POST', async () => {
  await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('escalate-named', [{ apiGroups: [G], resources: ['roles'], resourceNames: ['named'], verbs: ['escalate'] }])));
  await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('pat-escalate-named', 'Role', 'escalate-named', 'pat')));
  const secrets = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }];
  const posted = await as('pat', 'POST', `${API}/namespaces/${NS}/roles`, role('named', secrets));
  expect([posted.status, posted.json.reason]).toEqual([403, 'Forbidden']);
  await created(as('pat', 'PUT', `${API}/namespaces/${NS}/roles/named`, role('named', secrets)));
  const other = await as('pat', 'PUT', `${API}/namespaces/${NS}/roles/other-name`, role('other-name', secrets));
  expect([other.status, other.json.reason]).toEqual([403, 'Forbidden']);
});

it('needs the create verb: update or patch alone does not create', async () => {
  const res = await as('uma', 'PUT', `${API}/namespaces/${NS}/roles/empty`, role('empty', []));
  expect([res.status, res.json.message]).toEqual([
    403,
    `roles.${G} "empty" is forbidden: User "uma" cannot create resource "roles" in API group "${G}" in the namespace "${NS}"`,
  ]);
  // Nor does patch: server-side apply creates only with create, as upstream's patch handler.
  const applied = await raw(srv, 'PATCH', `${API}/namespaces/${NS}/roles/empty?fieldManager=uma`, {
    body: role('empty', []),
    contentType: 'application/apply-patch+yaml',
    headers: { 'Impersonate-User': 'uma' },
  });
  expect([applied.status, applied.json.message]).toEqual([403, res.json.message]);
  expect((await as('admin', 'GET', `${API}/namespaces/${NS}/roles/empty`)).status).toBe(404);
  // What uma may update, uma updates.
  await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('uma-target', [])));
  expect((await as('uma', 'PUT', `${API}/namespaces/${NS}/roles/uma-target`, { ...role('uma-target', []), metadata: { name: 'uma-target', namespace: NS, labels: { a: 'b' } } })).status).toBe(200);
});

it('audits a PUT that creates as the update it was sent as, answered 201 with the created object', async () => {
  const put = await created(as('admin', 'PUT', `${API}/namespaces/${NS}/roles/audited`, role('audited', PODS_READ)));
  const id = put.headers['audit-id'];
  const [ev, ...more] = byId(await eventsWhen(auditLog, (evs) => byId(evs, id).length > 0), id);
  expect(more).toEqual([]);
  expect(ev).toMatchObject({
    level: 'RequestResponse',
    stage: 'ResponseComplete',
    verb: 'update',
    objectRef: { resource: 'roles', namespace: NS, name: 'audited', apiGroup: G },
    responseStatus: { code: 201 },
    requestObject: { metadata: { name: 'audited', namespace: NS } },
    responseObject: { metadata: { name: 'audited', uid: put.json.metadata.uid, resourceVersion: put.json.metadata.resourceVersion } },
  });
});
