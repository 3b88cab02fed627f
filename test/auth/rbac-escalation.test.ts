/**
 * RBAC escalation prevention on the full embedded server over HTTPS: users act through
 * impersonation by the admin, so every request carries a real identity through the real
 * authenticator, authorizer and RBAC registry.
 */
import { compactString, uncoveredRules } from '../../src/apiserver/registry/rbac/escalation.js';
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { rbacObjects } from '../helpers/rbac-objects.js';
import type { PolicyRule } from '../../src/api/rbac.js';

const G = 'rbac.authorization.k8s.io';
const API = `/apis/${G}/v1`;
const NS = 'team';

const rule = (p: Partial<PolicyRule>): PolicyRule => ({ verbs: [], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [], ...p });

describe('uncoveredRules (covers semantics)', () => {
  it('breaks requested rules down and checks each part against the owned rules', () => {
    const owned = [
      rule({ apiGroups: [''], resources: ['pods', '*/status'], verbs: ['get', 'list'] }),
      rule({ apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'], verbs: ['*'] }),
      rule({ nonResourceURLs: ['/logs/*'], verbs: ['get'] }),
    ];
    const requested = [
      rule({ apiGroups: [''], resources: ['pods', 'nodes/status', 'pods/log'], verbs: ['get', 'delete'] }),
      rule({ apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web', 'db'], verbs: ['patch'] }),
      rule({ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }),
      rule({ nonResourceURLs: ['/logs/a', '/metrics'], verbs: ['get'] }),
    ];
    expect(uncoveredRules(owned, requested).map(compactString)).toEqual([
      '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
      '{APIGroups:[""], Resources:["nodes/status"], Verbs:["delete"]}',
      '{APIGroups:[""], Resources:["pods/log"], Verbs:["get"]}',
      '{APIGroups:[""], Resources:["pods/log"], Verbs:["delete"]}',
      '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["db"], Verbs:["patch"]}',
      '{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}',
      '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ]);
  });

  it('lets only a wildcard cover a wildcard', () => {
    const everything = [rule({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] })];
    expect(uncoveredRules(everything, [rule({ apiGroups: ['x'], resources: ['y/z'], resourceNames: ['n'], verbs: ['bind'] })])).toEqual([]);
    expect(uncoveredRules([rule({ apiGroups: [''], resources: ['pods'], verbs: ['get'] })], [rule({ apiGroups: [''], resources: ['*'], verbs: ['get'] })])).toHaveLength(1);
  });
});

describe('RBAC escalation prevention (HTTPS, embedded server)', () => {
  let srv: TestServer;
  const as = (user: string, method: string, path: string, body?: unknown): Promise<RawResponse> =>
    raw(srv, method, path, { body, headers: user === 'admin' ? {} : { 'Impersonate-User': user } });
  const created = async (r: Promise<RawResponse>): Promise<void> => {
    const res = await r;
    expect([res.status, res.json?.message]).toEqual([201, undefined]);
  };
  const { role, binding } = rbacObjects(NS);
  const notHeld = (resource: string, name: string, user: string, rules: string[]): string =>
    `${resource}.${G} "${name}" is forbidden: user "${user}" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n${rules.join('\n')}`;

  beforeAll(async () => {
    srv = await startTestServer();
    await created(as('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
    // bob may only create rolebindings in the namespace; rita may create and update roles there.
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('binder', [{ apiGroups: [G], resources: ['rolebindings'], verbs: ['create'] }])));
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('bob-binder', 'Role', 'binder', 'bob')));
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('role-writer', [{ apiGroups: [G], resources: ['roles'], verbs: ['create', 'update'] }])));
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('rita-writer', 'Role', 'role-writer', 'rita')));
  });
  afterAll(async () => {
    await srv?.close();
  });

  it('forbids binding a role whose permissions the user lacks, with the upstream message', async () => {
    const res = await as('bob', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('bob-admin', 'ClusterRole', 'cluster-admin', 'bob'));
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403, details: { name: 'bob-admin', group: G, kind: 'rolebindings' } });
    expect(res.json.message).toBe(
      notHeld('rolebindings', 'bob-admin', 'bob', ['{APIGroups:["*"], Resources:["*"], Verbs:["*"]}', '{NonResourceURLs:["*"], Verbs:["*"]}']),
    );
    const missing = await as('bob', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('bob-ghost', 'Role', 'ghost', 'bob'));
    expect([missing.status, missing.json.message]).toEqual([403, `rolebindings.${G} "bob-ghost" is forbidden: roles.${G} "ghost" not found`]);
  });

  it('allows binding a role whose permissions the user holds in that namespace', async () => {
    await created(as('bob', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('carol-binder', 'Role', 'binder', 'carol')));
    // The same permissions held only in "team" do not let a ClusterRoleBinding grant them everywhere.
    await created(as('admin', 'POST', `${API}/clusterroles`, role('binder-everywhere', [{ apiGroups: [G], resources: ['rolebindings'], verbs: ['create'] }], 'ClusterRole')));
    await created(as('admin', 'POST', `${API}/clusterroles`, role('crb-creator', [{ apiGroups: [G], resources: ['clusterrolebindings'], verbs: ['create'] }], 'ClusterRole')));
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('bob-crb', 'ClusterRole', 'crb-creator', 'bob')));
    const crb = { ...binding('carol-everywhere', 'ClusterRole', 'binder-everywhere', 'carol'), kind: 'ClusterRoleBinding', metadata: { name: 'carol-everywhere' } };
    expect((await as('bob', 'POST', `${API}/clusterrolebindings`, crb)).status).toBe(403);
  });

  it('allows binding any role once the user has bind on that role', async () => {
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('bind-admin', [{ apiGroups: [G], resources: ['clusterroles'], resourceNames: ['cluster-admin'], verbs: ['bind'] }])));
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('bob-bind-admin', 'Role', 'bind-admin', 'bob')));
    // bind names one role: others stay guarded.
    const other = await as('bob', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('bob-edit', 'Role', 'role-writer', 'bob'));
    expect([other.status, other.json.message]).toEqual([403, notHeld('rolebindings', 'bob-edit', 'bob', ['{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["create" "update"]}'])]);
    await created(as('bob', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('bob-admin', 'ClusterRole', 'cluster-admin', 'bob')));
  });

  it('forbids creating or widening a role beyond held permissions until the user has escalate', async () => {
    const readerRules = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }];
    const res = await as('rita', 'POST', `${API}/namespaces/${NS}/roles`, role('reader', readerRules));
    expect([res.status, res.json.message]).toEqual([403, notHeld('roles', 'reader', 'rita', ['{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}'])]);

    await created(as('rita', 'POST', `${API}/namespaces/${NS}/roles`, role('sub-writer', [{ apiGroups: [G], resources: ['roles'], verbs: ['update'] }])));
    const stored = (await as('admin', 'GET', `${API}/namespaces/${NS}/roles/sub-writer`)).json;
    const widened = await as('rita', 'PUT', `${API}/namespaces/${NS}/roles/sub-writer`, { ...stored, rules: [{ apiGroups: [G], resources: ['roles'], verbs: ['update', 'delete'] }] });
    expect([widened.status, widened.json.message]).toEqual([403, notHeld('roles', 'sub-writer', 'rita', ['{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["delete"]}'])]);

    await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('escalator', [{ apiGroups: [G], resources: ['roles'], verbs: ['escalate'] }])));
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('rita-escalator', 'Role', 'escalator', 'rita')));
    await created(as('rita', 'POST', `${API}/namespaces/${NS}/roles`, role('reader', readerRules)));
  });

  it('checks ClusterRoles against cluster-wide permissions, and an aggregationRule against cluster-admin', async () => {
    const creator = [{ apiGroups: [G], resources: ['clusterroles'], verbs: ['create'] }];
    await created(as('admin', 'POST', `${API}/clusterroles`, role('cr-creator', creator, 'ClusterRole')));
    const crb = { ...binding('erin-cr', 'ClusterRole', 'cr-creator', 'erin'), kind: 'ClusterRoleBinding', metadata: { name: 'erin-cr' } };
    await created(as('admin', 'POST', `${API}/clusterrolebindings`, crb));
    // erin holds pods/get only in "team": not enough for a ClusterRole.
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('pod-getter', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }])));
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/rolebindings`, binding('erin-pods', 'Role', 'pod-getter', 'erin')));
    const wide = await as('erin', 'POST', `${API}/clusterroles`, role('pod-getter', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], 'ClusterRole'));
    expect([wide.status, wide.json.message]).toEqual([403, notHeld('clusterroles', 'pod-getter', 'erin', ['{APIGroups:[""], Resources:["pods"], Verbs:["get"]}'])]);
    await created(as('erin', 'POST', `${API}/clusterroles`, role('cr-creator-copy', creator, 'ClusterRole')));
    const aggregated = { ...role('aggregated', [], 'ClusterRole'), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] } };
    const agg = await as('erin', 'POST', `${API}/clusterroles`, aggregated);
    expect([agg.status, agg.json.message]).toEqual([403, `clusterroles.${G} "aggregated" is forbidden: must have cluster-admin privileges to use the aggregationRule`]);
    await created(as('admin', 'POST', `${API}/clusterroles`, aggregated));
  });

  it('lets the admin (system:masters) grant anything', async () => {
    const crb = { ...binding('dave-admin', 'ClusterRole', 'cluster-admin', 'dave'), kind: 'ClusterRoleBinding', metadata: { name: 'dave-admin' } };
    await created(as('admin', 'POST', `${API}/clusterrolebindings`, crb));
    await created(as('admin', 'POST', `${API}/namespaces/${NS}/roles`, role('all', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])));
  });
});
