import { ApiError } from '../../src/apiserver/http/errors.js';
import { defaultPolicyObjects, kubeadmAutoApproveBindings } from '../../src/apiserver/authorization/rbac/default-policy.js';
import { createImpersonatingAuthenticator } from '../../src/apiserver/server/impersonation.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES } from '../../src/apiserver/authentication/resource-infos.js';
import { createRbacAuthorizer } from '../../src/apiserver/authorization/rbac/rbac-authorizer.js';
import type { Authenticator } from '../../src/apiserver/authentication/types.js';
import type { KObject, UserInfo } from '../../src/api/meta.js';
import { rbacStrategies } from '../../src/apiserver/registry/rbac/rbac.js';
import { reviewStrategies } from '../../src/apiserver/registry/authorization/reviews.js';
import type { Strategy } from '../../src/apiserver/registry/generic/strategy.js';
import { ctxFor, MemoryObjects } from './fixtures.js';

const G = 'rbac.authorization.k8s.io';
const user = (username: string, groups: string[] = ['system:authenticated']): UserInfo => ({ username, groups });

describe('RBAC authorizer', () => {
  let objects: MemoryObjects;
  const authz = (): ReturnType<typeof createRbacAuthorizer> => createRbacAuthorizer({ objects });

  beforeEach(() => {
    objects = new MemoryObjects();
    for (const o of defaultPolicyObjects()) objects.put(o.kind === 'ClusterRole' ? CLUSTER_ROLES : CLUSTER_ROLE_BINDINGS, o);
    objects.put(CLUSTER_ROLES, {
      metadata: { name: 'approver' },
      rules: [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval'], verbs: ['update'] },
        { apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['approve'] },
      ],
    });
    objects.put(CLUSTER_ROLE_BINDINGS, {
      metadata: { name: 'approvers' },
      roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'approver' },
      subjects: [{ kind: 'User', apiGroup: G, name: 'ann' }],
    });
    objects.put(ROLES, {
      metadata: { name: 'minter', namespace: 'team' },
      rules: [{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] }, { apiGroups: [''], resources: ['*/status'], verbs: ['get'] }],
    });
    objects.put(ROLE_BINDINGS, {
      metadata: { name: 'mint', namespace: 'team' },
      roleRef: { apiGroup: G, kind: 'Role', name: 'minter' },
      subjects: [{ kind: 'ServiceAccount', name: 'ci' }],
    });
  });

  it('allows by ClusterRoleBinding with upstream reason, including subresources and resourceNames', async () => {
    const a = authz();
    expect(await a.authorize({ user: user('ann'), verb: 'update', apiGroup: 'certificates.k8s.io', resource: 'certificatesigningrequests', subresource: 'approval', name: 'x' })).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "approvers" of ClusterRole "approver" to User "ann"',
    });
    expect((await a.authorize({ user: user('ann'), verb: 'update', apiGroup: 'certificates.k8s.io', resource: 'certificatesigningrequests', name: 'x' })).allowed).toBe(false);
    expect((await a.authorize({ user: user('ann'), verb: 'approve', apiGroup: 'certificates.k8s.io', resource: 'signers', name: 'example.com/*' })).allowed).toBe(true);
    expect((await a.authorize({ user: user('ann'), verb: 'approve', apiGroup: 'certificates.k8s.io', resource: 'signers', name: 'kubernetes.io/legacy-unknown' })).allowed).toBe(false);
    expect((await a.authorize({ user: user('ann'), verb: 'approve', apiGroup: 'certificates.k8s.io', resource: 'signers' })).allowed).toBe(false);
  });

  it('grants RoleBindings only in their namespace, and matches service-account subjects', async () => {
    const ci = user('system:serviceaccount:team:ci', ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated']);
    const a = authz();
    expect(await a.authorize({ user: ci, verb: 'create', apiGroup: '', resource: 'serviceaccounts', subresource: 'token', namespace: 'team', name: 'x' })).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "mint/team" of Role "minter" to ServiceAccount "ci/team"',
    });
    expect((await a.authorize({ user: ci, verb: 'get', apiGroup: '', resource: 'pods', subresource: 'status', namespace: 'team', name: 'p' })).allowed).toBe(true);
    expect((await a.authorize({ user: ci, verb: 'create', apiGroup: '', resource: 'serviceaccounts', subresource: 'token', namespace: 'other', name: 'x' })).allowed).toBe(false);
    expect((await a.authorize({ user: user('system:serviceaccount:other:ci'), verb: 'create', apiGroup: '', resource: 'serviceaccounts', subresource: 'token', namespace: 'team' })).allowed).toBe(false);
  });

  it('applies the default policy: discovery for authenticated, public info for anonymous, masters bypass', async () => {
    const a = authz();
    expect((await a.authorize({ user: user('bob'), verb: 'get', path: '/apis/certificates.k8s.io/v1' })).allowed).toBe(true);
    expect((await a.authorize({ user: { username: 'system:anonymous', groups: ['system:unauthenticated'] }, verb: 'get', path: '/api' })).allowed).toBe(false);
    expect((await a.authorize({ user: { username: 'system:anonymous', groups: ['system:unauthenticated'] }, verb: 'get', path: '/healthz' })).allowed).toBe(true);
    expect((await a.authorize({ user: user('root', ['system:masters']), verb: 'delete', apiGroup: 'x', resource: 'y' })).allowed).toBe(true);
    expect((await a.authorize({ user: user('bob'), verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' })).allowed).toBe(true);
    expect((await a.authorize({ user: user('bob'), verb: 'create', apiGroup: 'authentication.k8s.io', resource: 'tokenreviews' })).allowed).toBe(false);
    // kubeadm's node-join tokens (and only they) may create CSRs; auto-approval is a separate opt-in.
    const joinToken = user('system:bootstrap:abcdef', ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token']);
    const otherToken = user('system:bootstrap:ghijkl', ['system:bootstrappers']);
    const createCsr = { verb: 'create', apiGroup: 'certificates.k8s.io', resource: 'certificatesigningrequests' };
    expect((await a.authorize({ user: joinToken, ...createCsr })).allowed).toBe(true);
    expect((await a.authorize({ user: otherToken, ...createCsr })).allowed).toBe(false);
    expect((await a.authorize({ user: joinToken, ...createCsr, subresource: 'nodeclient' })).allowed).toBe(false);
  });

  it("binds kubeadm's auto-approval as kubeadm does: nodeclient for node-join tokens only, selfnodeclient for nodes", async () => {
    for (const o of kubeadmAutoApproveBindings()) objects.put(CLUSTER_ROLE_BINDINGS, o);
    const a = authz();
    const nodeclient = { verb: 'create', apiGroup: 'certificates.k8s.io', resource: 'certificatesigningrequests', subresource: 'nodeclient' };
    const joinToken = user('system:bootstrap:abcdef', ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token']);
    expect(await a.authorize({ user: joinToken, ...nodeclient })).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "kubeadm:node-autoapprove-bootstrap" of ClusterRole "system:certificates.k8s.io:certificatesigningrequests:nodeclient" to Group "system:bootstrappers:kubeadm:default-node-token"',
    });
    expect((await a.authorize({ user: user('system:bootstrap:ghijkl', ['system:bootstrappers', 'system:bootstrappers:tools']), ...nodeclient })).allowed).toBe(false);
    const node = user('system:node:w1', ['system:nodes']);
    expect((await a.authorize({ user: node, ...nodeclient, subresource: 'selfnodeclient' })).allowed).toBe(true);
    expect((await a.authorize({ user: node, ...nodeclient })).allowed).toBe(false);
  });
});

describe('impersonation', () => {
  const objects = new MemoryObjects();
  objects.put(CLUSTER_ROLES, {
    metadata: { name: 'imp' },
    rules: [
      { apiGroups: [''], resources: ['users'], resourceNames: ['bob'], verbs: ['impersonate'] },
      { apiGroups: [''], resources: ['groups'], resourceNames: ['devs'], verbs: ['impersonate'] },
    ],
  });
  objects.put(CLUSTER_ROLE_BINDINGS, { metadata: { name: 'imp' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'imp' }, subjects: [{ kind: 'User', apiGroup: G, name: 'ann' }] });
  const inner: Authenticator = { authenticate: () => Promise.resolve(user('ann')) };
  const auth = createImpersonatingAuthenticator(inner, createRbacAuthorizer({ objects }));
  const run = (headers: Record<string, string | string[]>): Promise<UserInfo | undefined> => auth.authenticate({ headers, clientCertificateChain: [] });

  it('impersonates an allowed user and group and strips the headers', async () => {
    const headers: Record<string, string | string[]> = { 'impersonate-user': 'bob', 'impersonate-group': ['devs'] };
    expect(await run(headers)).toEqual({ username: 'bob', groups: ['devs', 'system:authenticated'] });
    expect(Object.keys(headers)).toEqual([]);
  });

  it('refuses each attribute that is not allowed, with a 403', async () => {
    const err = await run({ 'impersonate-user': 'root' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe('users "root" is forbidden: User "ann" cannot impersonate resource "users" in API group "" at the cluster scope');
    const grp = await run({ 'impersonate-user': 'bob', 'impersonate-group': 'system:masters' }).catch((e: unknown) => e);
    expect((grp as ApiError).code).toBe(403);
    const sa = await run({ 'impersonate-user': 'system:serviceaccount:kube-system:admin' }).catch((e: unknown) => e);
    expect((sa as ApiError).message).toContain('in the namespace "kube-system"');
    const extra = await run({ 'impersonate-user': 'bob', 'impersonate-extra-scopes': 'all' }).catch((e: unknown) => e);
    expect((extra as ApiError).message).toContain('cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io"');
  });

  it('refuses groups without a user with 400', async () => {
    const err = (await run({ 'impersonate-group': 'devs' }).catch((e: unknown) => e)) as ApiError;
    expect([err.code, err.message]).toEqual([400, 'requested [{Group  devs    }] without impersonating a user']);
  });
});

describe('RBAC strategies and reviews', () => {
  const strategy = (plural: string): Strategy => [...rbacStrategies(), ...reviewStrategies()].find((s) => s.info.plural === plural) as Strategy;
  const objects = new MemoryObjects();
  const authorizer = createRbacAuthorizer({ objects });

  it('validates rules and bindings with upstream messages', () => {
    const role: KObject = { rules: [{ apiGroups: [''], resources: ['pods'], verbs: [] }, { nonResourceURLs: ['/x'], verbs: ['get'] }] };
    expect(strategy('roles').validate!(role, ctxFor(user('a'), objects, authorizer)).map((e) => `${e.field}: ${e.detail}`)).toEqual([
      'rules[0].verbs: verbs must contain at least one value',
      'rules[1].nonResourceURLs: namespaced rules cannot apply to non-resource URLs',
    ]);
    expect(strategy('clusterroles').validate!(role, ctxFor(user('a'), objects, authorizer))).toHaveLength(1);
    const crb: KObject = { roleRef: { apiGroup: G, kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'x' }] };
    expect(strategy('clusterrolebindings').validate!(crb, ctxFor(user('a'), objects, authorizer)).map((e) => e.field)).toEqual(['roleRef.kind', 'subjects[0].namespace']);
    const old: KObject = { roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'a' }, subjects: [] };
    const changed: KObject = { roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'b' }, subjects: [] };
    expect(strategy('rolebindings').validateUpdate!(changed, old, ctxFor(user('a'), objects, authorizer)).map((e) => e.detail)).toEqual(['cannot change roleRef']);
  });

  it('prints binding tables with Role and wide subject columns', () => {
    const t = strategy('rolebindings').table!;
    const row = t.cells({ metadata: { name: 'b', creationTimestamp: new Date(Date.now() - 90_000).toISOString() }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'ci', namespace: 'team' }, { kind: 'User', name: 'u' }] }, new Date());
    expect(row).toEqual(['b', 'ClusterRole/view', '90s', 'u', '', 'team/ci']);
    expect(t.columns.map((c) => c.name)).toEqual(['Name', 'Role', 'Age', 'Users', 'Groups', 'ServiceAccounts']);
  });

  it('SubjectAccessReview evaluates the spec user; SelfSubjectAccessReview the caller; SelfSubjectReview echoes', async () => {
    const ctx = ctxFor(user('root', ['system:masters']), objects, authorizer);
    const sar = await strategy('subjectaccessreviews').virtual!.create(
      { spec: { user: 'nobody', groups: [], resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'x' } } }, ctx, {});
    expect(sar.status).toEqual({ allowed: false });
    const self = await strategy('selfsubjectaccessreviews').virtual!.create({ spec: { nonResourceAttributes: { path: '/api', verb: 'get' } } }, ctx, {});
    expect(self.status).toEqual({ allowed: true });
    const whoami = await strategy('selfsubjectreviews').virtual!.create({}, ctx, {});
    expect(whoami.status).toEqual({ userInfo: { username: 'root', groups: ['system:masters'] } });
  });

  it('rejects malformed reviews with upstream errors', async () => {
    const ctx = ctxFor(user('root'), objects, authorizer);
    const err = (await strategy('subjectaccessreviews').virtual!.create({ spec: {} }, ctx, {}).catch((e: unknown) => e)) as ApiError;
    expect(err.message).toBe(
      'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
    );
    const local = (await strategy('localsubjectaccessreviews').virtual!.create(
      { spec: { user: 'u', resourceAttributes: { namespace: 'a', verb: 'get', resource: 'pods' } } }, ctx, { namespace: 'b' }).catch((e: unknown) => e)) as ApiError;
    expect([local.code, local.message]).toEqual([400, 'spec.resourceAttributes.namespace must match namespace: b']);
  });
});
