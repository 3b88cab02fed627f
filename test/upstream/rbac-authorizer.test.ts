/**
 * RBAC authorization cases ported as data from kubernetes plugin/pkg/auth/authorizer/rbac/rbac_test.go
 * (TestAuthorizer, TestRuleMatches), run against our authorizer over a store holding the rows' roles and bindings.
 */
import type { KObject, UserInfo } from '../../src/api/meta.js';
import { createRbacAuthorizer, rulesOf, ruleAllows } from '../../src/apiserver/authorization/rbac/rbac-authorizer.js';
import { objectReader } from '../../src/apiserver/registry/registries.js';
import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import { storageKey } from '../../src/apiserver/storage/store.js';

const RBAC = 'rbac.authorization.k8s.io';
type Attrs = Parameters<typeof ruleAllows>[0];

/** newRule(verbs, apiGroups, resources, nonResourceURLs) upstream: comma lists, "" meaning [""]. */
const rule = (verbs: string, apiGroups: string, resources: string, urls: string) => ({
  verbs: verbs.split(','),
  apiGroups: apiGroups.split(','),
  resources: resources.split(','),
  nonResourceURLs: urls.split(','),
});
const clusterRole = (name: string, ...rules: object[]): KObject => ({ apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name }, rules });
/** Subjects as upstream writes them: "User:name", "Group:name". */
const subjects = (list: string[]) =>
  list.map((s) => {
    const [kind = '', name = ''] = s.split(':');
    return { kind, name, apiGroup: RBAC };
  });
let seq = 0;
const clusterRoleBinding = (role: string, ...subj: string[]): KObject => ({
  apiVersion: `${RBAC}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: { name: `crb-${seq++}` },
  roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
  subjects: subjects(subj),
});
const roleBindingToClusterRole = (namespace: string, role: string, ...subj: string[]): KObject => ({
  apiVersion: `${RBAC}/v1`,
  kind: 'RoleBinding',
  metadata: { name: `rb-${seq++}`, namespace },
  roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
  subjects: subjects(subj),
});
/** defaultAttributes{user, groups, verb, resource, subresource, namespace, apiGroup} upstream. */
const res = (...[user, groups, verb, resource, subresource, namespace]: [string, string, string, string, string, string]): Attrs => ({
  user: { username: user, groups: groups ? groups.split(',') : [] },
  verb,
  apiGroup: '',
  resource,
  subresource,
  namespace,
});
const url = (user: Partial<UserInfo>, verb: string, path: string): Attrs => ({
  user: { username: user.username ?? '', groups: user.groups ?? [] },
  verb,
  path,
});

interface Case {
  name: string;
  objects: KObject[];
  pass: Attrs[];
  fail: Attrs[];
}

const CASES: Case[] = [
  {
    name: 'a RoleBinding to a star ClusterRole, by user and by group',
    objects: [clusterRole('admin', rule('*', '*', '*', '*')), roleBindingToClusterRole('ns1', 'admin', 'User:admin', 'Group:admins')],
    pass: [
      res('admin', '', 'get', 'Pods', '', 'ns1'),
      res('admin', '', 'watch', 'Pods', '', 'ns1'),
      res('admin', 'group1', 'watch', 'Foobar', '', 'ns1'),
      res('joe', 'admins', 'watch', 'Foobar', '', 'ns1'),
      res('joe', 'group1,admins', 'watch', 'Foobar', '', 'ns1'),
    ],
    fail: [
      res('admin', '', 'GET', 'Pods', '', 'ns2'),
      res('admin', '', 'GET', 'Nodes', '', ''),
      res('admin', 'admins', 'GET', 'Pods', '', 'ns2'),
      res('admin', 'admins', 'GET', 'Nodes', '', ''),
    ],
  },
  {
    name: 'non-resource URLs',
    objects: [
      clusterRole('non-resource-url-getter', rule('get', '', '', '/apis')),
      clusterRole('non-resource-url', rule('*', '', '', '/apis')),
      clusterRole('non-resource-url-prefix', rule('get', '', '', '/apis/*')),
      clusterRoleBinding('non-resource-url-getter', 'User:foo', 'Group:bar'),
      clusterRoleBinding('non-resource-url', 'User:admin', 'Group:admin'),
      clusterRoleBinding('non-resource-url-prefix', 'User:prefixed', 'Group:prefixed'),
    ],
    pass: [
      url({ username: 'foo' }, 'get', '/apis'),
      url({ groups: ['bar'] }, 'get', '/apis'),
      url({ username: 'admin' }, 'get', '/apis'),
      url({ groups: ['admin'] }, 'get', '/apis'),
      url({ username: 'admin' }, 'watch', '/apis'),
      url({ groups: ['admin'] }, 'watch', '/apis'),
      url({ username: 'prefixed' }, 'get', '/apis/v1'),
      url({ groups: ['prefixed'] }, 'get', '/apis/v1'),
      url({ username: 'prefixed' }, 'get', '/apis/v1/foobar'),
      url({ groups: ['prefixed'] }, 'get', '/apis/v1/foorbar'),
    ],
    fail: [
      url({ username: 'foo' }, 'watch', '/apis'),
      url({ groups: ['bar'] }, 'watch', '/apis'),
      url({ username: 'foo' }, 'get', '/api/v1'),
      url({ groups: ['bar'] }, 'get', '/api/v1'),
      url({ username: 'admin' }, 'get', '/api/v1'),
      url({ groups: ['admin'] }, 'get', '/api/v1'),
      url({ username: 'prefixed' }, 'get', '/api/v1'),
      url({ groups: ['prefixed'] }, 'get', '/api/v1'),
    ],
  },
  {
    name: 'a rule on a resource does not cover its subresources',
    objects: [clusterRole('admin', rule('*', '*', 'pods', '*')), roleBindingToClusterRole('ns1', 'admin', 'User:admin', 'Group:admins')],
    pass: [res('admin', '', 'get', 'pods', '', 'ns1')],
    fail: [res('admin', '', 'get', 'pods', 'status', 'ns1')],
  },
  {
    name: 'a rule on a subresource does not cover its resource',
    objects: [clusterRole('admin', rule('*', '*', 'pods/status', '*')), roleBindingToClusterRole('ns1', 'admin', 'User:admin', 'Group:admins')],
    pass: [res('admin', '', 'get', 'pods', 'status', 'ns1')],
    fail: [res('admin', '', 'get', 'pods', '', 'ns1')],
  },
];

describe('TestAuthorizer', () => {
  describe.each(CASES)('$name', ({ objects, pass, fail }) => {
    const store = new MemoryStore();
    const authorizer = createRbacAuthorizer({ objects: objectReader(store) });
    beforeAll(async () => {
      for (const o of objects) {
        const plural = o.kind === 'ClusterRole' ? 'clusterroles' : o.kind === 'ClusterRoleBinding' ? 'clusterrolebindings' : 'rolebindings';
        await store.create(storageKey(RBAC, plural, o.metadata?.namespace, o.metadata?.name ?? ''), o);
      }
    });
    afterAll(() => store.close());
    it.each(pass.map((a) => [a]))('allows %j', async (a) => {
      expect((await authorizer.authorize(a)).allowed).toBe(true);
    });
    it.each(fail.map((a) => [a]))('refuses %j', async (a) => {
      expect((await authorizer.authorize(a)).allowed).toBe(false);
    });
  });
});

describe('TestRuleMatches', () => {
  const r = (verbs: string[], groups: string[], resources: string[]) => rulesOf(clusterRole('x', { verbs, apiGroups: groups, resources }))[0]!;
  const u = (verbs: string[], urls: string[]) => rulesOf(clusterRole('x', { verbs, nonResourceURLs: urls }))[0]!;
  const req = (verb: string, apiGroup: string, resource: string, subresource = ''): Attrs => ({ user: { username: 'u', groups: [] }, verb, apiGroup, resource, subresource });
  const nr = (verb: string, path: string): Attrs => ({ user: { username: 'u', groups: [] }, verb, path });
  const grid = (verbs: string[], groups: string[], resources: string[], sub = '') =>
    verbs.flatMap((v) => groups.flatMap((g) => resources.map((res) => req(v, g, res, sub))));
  const all = grid(['verb1', 'verb2'], ['group1', 'group2'], ['resource1', 'resource2']);
  const key = (a: Attrs): string => `${a.verb} ${a.apiGroup}/${a.resource}`;

  it.each<[string, ReturnType<typeof r>, (a: Attrs) => boolean]>([
    ['star verb, exact match other', r(['*'], ['group1'], ['resource1']), (a) => a.apiGroup === 'group1' && a.resource === 'resource1'],
    ['star group, exact match other', r(['verb1'], ['*'], ['resource1']), (a) => a.verb === 'verb1' && a.resource === 'resource1'],
    ['star resource, exact match other', r(['verb1'], ['group1'], ['*']), (a) => a.verb === 'verb1' && a.apiGroup === 'group1'],
    ['tuple expansion', r(['verb1', 'verb2'], ['group1', 'group2'], ['resource1', 'resource2']), () => true],
  ])('%s', (_name, rule, expected) => {
    expect(Object.fromEntries(all.map((a) => [key(a), ruleAllows(a, rule)]))).toEqual(Object.fromEntries(all.map((a) => [key(a), expected(a)])));
  });

  it('subresource expansion', () => {
    const rule = r(['*'], ['*'], ['resource1/subresource1']);
    expect(ruleAllows(req('verb1', 'group1', 'resource1', 'subresource1'), rule)).toBe(true);
    expect(ruleAllows(req('verb1', 'group2', 'resource1', 'subresource2'), rule)).toBe(false);
    expect(ruleAllows(req('verb1', 'group1', 'resource2', 'subresource1'), rule)).toBe(false);
    expect(ruleAllows(req('verb2', 'group1', 'resource1', 'subresource1'), rule)).toBe(true);
    expect(ruleAllows(req('verb2', 'group2', 'resource2', 'subresource1'), rule)).toBe(false);
  });

  const paths = ['/foo', '/foo/bar', '/foo/baz', '/foo/bar/one', '/foo/baz/one'];
  it.each<[string, ReturnType<typeof u>, Array<[string, string, boolean]>]>([
    ['star nonresource, exact match other', u(['verb1'], ['*']), [...paths.map((p): [string, string, boolean] => ['verb1', p, true]), ...paths.map((p): [string, string, boolean] => ['verb2', p, false])]],
    [
      'star nonresource subpath',
      u(['verb1'], ['/foo/*']),
      [
        ['verb1', '/foo', false],
        ['verb1', '/foo/bar', true],
        ['verb1', '/foo/baz', true],
        ['verb1', '/foo/bar/one', true],
        ['verb1', '/foo/baz/one', true],
        ['verb1', '/notfoo', false],
        ['verb1', '/notfoo/bar', false],
        ['verb1', '/notfoo/baz', false],
        ['verb1', '/notfoo/bar/one', false],
        ['verb1', '/notfoo/baz/one', false],
      ],
    ],
    [
      'star verb, exact nonresource',
      u(['*'], ['/foo', '/foo/bar/one']),
      ['verb1', 'verb2'].flatMap((v) => paths.map((p): [string, string, boolean] => [v, p, p === '/foo' || p === '/foo/bar/one'])),
    ],
  ])('%s', (_name, rule, rows) => {
    for (const [verb, path, want] of rows) expect([verb, path, ruleAllows(nr(verb, path), rule)]).toEqual([verb, path, want]);
  });
});
