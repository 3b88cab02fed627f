/**
 * Aggregated ClusterRoles (kube-controller-manager's clusterrole-aggregation, run in the server):
 * admin/edit/view hold the rules of the roles labelled aggregate-to-*, follow label and rule changes,
 * and grant what they aggregate.
 */
import type { KObject } from '../../src/api/meta.js';
import { aggregatedRules } from '../../src/apiserver/controllers/clusterrole-aggregation.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CR = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
const AGG = (role: string): string => `rbac.authorization.k8s.io/aggregate-to-${role}`;

describe('aggregatedRules', () => {
  const role = (name: string, labels: Record<string, string>, rules: unknown[]): KObject => ({ kind: 'ClusterRole', metadata: { name, labels }, rules });
  const target: KObject = {
    kind: 'ClusterRole',
    metadata: { name: 't' },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'true' } }, { matchExpressions: [{ key: 'b', operator: 'Exists' }] }] },
  };
  const r1 = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  const r2 = { verbs: ['list'], apiGroups: [''], resources: ['pods'] };

  it('unions the rules of every matching role in name order, each rule once', () => {
    const all = [role('z', { a: 'true' }, [r1]), role('m', { b: 'x' }, [r2, r1]), role('n', { a: 'false' }, [{ verbs: ['*'] }]), target];
    expect(aggregatedRules(target, all)).toEqual([r2, r1]);
  });
  it('is undefined for a role without an aggregation rule, and empty when nothing matches', () => {
    expect(aggregatedRules(role('x', {}, [r1]), [])).toBeUndefined();
    expect(aggregatedRules(target, [target])).toEqual([]);
  });
});

describe('aggregated ClusterRoles in the server', () => {
  let server: TestServer;
  const viewer = 'viewer-token-0123456789';
  beforeAll(async () => {
    server = await startTestServer({ tokenFile: `${viewer},vera,uid-vera\n` });
  });
  afterAll(async () => server.close());

  const rulesOf = async (name: string): Promise<unknown[]> => (await raw(server, 'GET', `${CR}/${name}`)).json.rules ?? [];
  const eventually = async (check: () => Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 100; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('condition not reached');
  };
  const hasRule = (rules: unknown[], resource: string): boolean =>
    rules.some((r) => ((r as { resources?: string[] }).resources ?? []).includes(resource));

  it('view, edit and admin aggregate the bootstrap roles along upstream\'s chain', async () => {
    const [view, edit, admin] = [await rulesOf('view'), await rulesOf('edit'), await rulesOf('admin')];
    expect(hasRule(view, 'configmaps')).toBe(true);
    expect(hasRule(view, 'secrets')).toBe(false);
    expect(hasRule(edit, 'secrets')).toBe(true);
    expect(hasRule(edit, 'configmaps')).toBe(true);
    expect(hasRule(admin, 'rolebindings')).toBe(true);
    expect(hasRule(admin, 'secrets')).toBe(true);
    expect(hasRule(edit, 'rolebindings')).toBe(false);
  });

  it('follows a new labelled role, a rule change and the label being removed', async () => {
    const extra = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widgets-view', labels: { [AGG('view')]: 'true' } }, rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] }] };
    expect((await raw(server, 'POST', CR, { body: extra })).status).toBe(201);
    await eventually(async () => hasRule(await rulesOf('view'), 'widgets') && hasRule(await rulesOf('admin'), 'widgets'));

    const changed = (await raw(server, 'GET', `${CR}/widgets-view`)).json;
    changed.rules = [{ apiGroups: ['example.com'], resources: ['gadgets'], verbs: ['get'] }];
    expect((await raw(server, 'PUT', `${CR}/widgets-view`, { body: changed })).status).toBe(200);
    await eventually(async () => hasRule(await rulesOf('edit'), 'gadgets') && !hasRule(await rulesOf('edit'), 'widgets'));

    const patch = { metadata: { labels: { [AGG('view')]: null } } };
    expect((await raw(server, 'PATCH', `${CR}/widgets-view`, { body: patch, contentType: 'application/merge-patch+json' })).status).toBe(200);
    await eventually(async () => !hasRule(await rulesOf('view'), 'gadgets') && !hasRule(await rulesOf('admin'), 'gadgets'));
  });

  it('a RoleBinding to view grants what view aggregates, and nothing it does not', async () => {
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'vera-view', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'vera' }],
    };
    expect((await raw(server, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', { body: binding })).status).toBe(201);
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps', { token: viewer })).status).toBe(200);
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/secrets', { token: viewer })).status).toBe(403);
  });
});
