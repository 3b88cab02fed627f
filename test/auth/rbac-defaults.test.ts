/**
 * rbac/v1 defaulting through the server, each row naming the upstream function it mirrors
 * (k8s.io/kubernetes pkg/apis/rbac/v1/defaults.go): applied before validation on create, update
 * and patch, so manifests without a subject's apiGroup are accepted as kube-apiserver accepts them.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const G = 'rbac.authorization.k8s.io';
const CRB = `/apis/${G}/v1/clusterrolebindings`;
const RB = `/apis/${G}/v1/namespaces/default/rolebindings`;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

type Body = Record<string, unknown>;
const view = { kind: 'ClusterRole', name: 'system:discovery' };

const rows: [string, string, Body, Body][] = [
  ['SetDefaults_Subject: a User subject gets the RBAC group', CRB,
    { metadata: { name: 'user' }, roleRef: { apiGroup: G, ...view }, subjects: [{ kind: 'User', name: 'alice' }] },
    { subjects: [{ kind: 'User', apiGroup: G, name: 'alice' }] }],
  ['SetDefaults_Subject: a Group subject gets the RBAC group, an empty one too', CRB,
    { metadata: { name: 'group' }, roleRef: { apiGroup: G, ...view }, subjects: [{ kind: 'Group', name: 'devs', apiGroup: '' }] },
    { subjects: [{ kind: 'Group', apiGroup: G, name: 'devs' }] }],
  ['SetDefaults_Subject: a ServiceAccount subject stays in the core group (apiGroup omitted)', RB,
    { metadata: { name: 'sa' }, roleRef: { apiGroup: G, ...view }, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }] },
    { subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }] }],
  ['SetDefaults_ClusterRoleBinding: roleRef.apiGroup', CRB,
    { metadata: { name: 'ref' }, roleRef: view, subjects: [{ kind: 'User', apiGroup: G, name: 'bob' }] },
    { roleRef: { apiGroup: G, ...view } }],
  ['SetDefaults_RoleBinding: roleRef.apiGroup', RB,
    { metadata: { name: 'ref' }, roleRef: view, subjects: [{ kind: 'User', name: 'bob' }] },
    { roleRef: { apiGroup: G, ...view }, subjects: [{ kind: 'User', apiGroup: G, name: 'bob' }] }],
];

describe('RBAC defaulting before validation', () => {
  it.each(rows)('%s', async (_name, url, body, expected) => {
    const r = await raw(s, 'POST', url, { body });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject(expected);
    if (expected.subjects) expect(r.json.subjects).toEqual(expected.subjects);
  });

  it('defaults on update and patch too', async () => {
    const cur = (await raw(s, 'GET', `${CRB}/user`)).json;
    const put = await raw(s, 'PUT', `${CRB}/user`, { body: { ...cur, subjects: [{ kind: 'User', name: 'carol' }] } });
    expect([put.status, put.json.subjects]).toEqual([200, [{ kind: 'User', apiGroup: G, name: 'carol' }]]);
    const patch = await raw(s, 'PATCH', `${CRB}/user`, { body: { subjects: [{ kind: 'Group', name: 'ops' }] }, contentType: 'application/merge-patch+json' });
    expect([patch.status, patch.json.subjects]).toEqual([200, [{ kind: 'Group', apiGroup: G, name: 'ops' }]]);
  });

  it('does not replace an apiGroup that was given: a wrong one is still refused', async () => {
    const r = await raw(s, 'POST', CRB, { body: { metadata: { name: 'wrong' }, roleRef: { apiGroup: G, ...view }, subjects: [{ kind: 'User', apiGroup: 'example.com', name: 'x' }] } });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(`ClusterRoleBinding.${G} "wrong" is invalid: subjects[0].apiGroup: Unsupported value: "example.com": supported values: "${G}"`);
  });
});
