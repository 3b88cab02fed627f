import { jest } from '@jest/globals';
import type { KObject, UserInfo } from '../../../api/meta.js';
import { objectReader } from '../../registry/registries.js';
import { MemoryStore } from '../../storage/memory/memory.js';
import { TrailingStore } from '../../../../test/helpers/trailing-store.js';
import { countedReader, untilReady } from '../../../../test/helpers/counted-reader.js';
import { storageKey } from '../../storage/store.js';
import { createRbacAuthorizer } from './rbac-authorizer.js';
import { RbacIndex } from './rbac-index.js';
import type { ObjectReader } from '../../authentication/types.js';
import type { Authorizer } from '../authorizer.js';

const RBAC = 'rbac.authorization.k8s.io';
const alice: UserInfo = { username: 'alice', groups: ['system:authenticated'] };
const key = (plural: string, name: string, namespace?: string): string => storageKey(RBAC, plural, namespace, name);
const rule = (verbs: string[]): Record<string, unknown> => ({ verbs, apiGroups: [''], resources: ['configmaps'] });
const role = (kind: string, name: string, verbs: string[], namespace?: string): KObject => ({
  apiVersion: `${RBAC}/v1`,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  rules: [rule(verbs)],
});
const binding = (kind: string, name: string, roleKind: string, user: string, namespace?: string): KObject => ({
  apiVersion: `${RBAC}/v1`,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  roleRef: { apiGroup: RBAC, kind: roleKind, name: 'r' },
  subjects: [{ kind: 'User', apiGroup: RBAC, name: user }],
});

/** A reader that finds nothing: decisions of an authorizer given it come from its index alone. */
const nothing: ObjectReader = { get: () => Promise.resolve(undefined), list: () => Promise.resolve([]) };

describe.each(['store', 'index'])('RBAC authorizer over changing roles and bindings (%s)', (from) => {
  const store = new MemoryStore();
  const index = from === 'index' ? new RbacIndex(store) : undefined;
  const authorizer = createRbacAuthorizer({ objects: index ? nothing : objectReader(store), index });
  const may = async (verb: string, namespace = 'ns'): Promise<boolean> =>
    (await authorizer.authorize({ user: alice, verb, apiGroup: '', resource: 'configmaps', namespace })).allowed;
  beforeAll(async () => {
    while (index && !index.ready()) await new Promise((r) => setTimeout(r, 1));
  });
  afterAll(() => {
    index?.stop();
    return store.close();
  });

  it('sees every create, update and delete of ClusterRoles and ClusterRoleBindings at the next decision', async () => {
    expect(await may('get')).toBe(false);
    await store.create(key('clusterroles', 'r'), role('ClusterRole', 'r', ['get']));
    expect(await may('get')).toBe(false);
    await store.create(key('clusterrolebindings', 'b'), binding('ClusterRoleBinding', 'b', 'ClusterRole', 'alice'));
    expect(await may('get')).toBe(true);
    expect(await may('list')).toBe(false);
    await store.update(key('clusterroles', 'r'), role('ClusterRole', 'r', ['list']));
    expect([await may('get'), await may('list')]).toEqual([false, true]);
    await store.update(key('clusterrolebindings', 'b'), binding('ClusterRoleBinding', 'b', 'ClusterRole', 'bob'));
    expect(await may('list')).toBe(false);
    await store.update(key('clusterrolebindings', 'b'), binding('ClusterRoleBinding', 'b', 'ClusterRole', 'alice'));
    expect(await may('list')).toBe(true);
    await store.delete(key('clusterroles', 'r'));
    expect(await may('list')).toBe(false);
    await store.create(key('clusterroles', 'r'), role('ClusterRole', 'r', ['list']));
    expect(await may('list')).toBe(true);
    await store.delete(key('clusterrolebindings', 'b'));
    expect(await may('list')).toBe(false);
  });

  it('sees Roles and RoleBindings of the request namespace only, as they change', async () => {
    await store.create(key('roles', 'r', 'ns'), role('Role', 'r', ['watch'], 'ns'));
    await store.create(key('rolebindings', 'b', 'ns'), binding('RoleBinding', 'b', 'Role', 'alice', 'ns'));
    expect([await may('watch'), await may('watch', 'other')]).toEqual([true, false]);
    const decision = await authorizer.authorize({ user: alice, verb: 'watch', apiGroup: '', resource: 'configmaps', namespace: 'ns' });
    expect(decision.reason).toBe('RBAC: allowed by RoleBinding "b/ns" of Role "r" to User "alice"');
    await store.update(key('roles', 'r', 'ns'), role('Role', 'r', ['get'], 'ns'));
    expect([await may('watch'), await may('get')]).toEqual([false, true]);
    await store.delete(key('rolebindings', 'b', 'ns'));
    expect(await may('get')).toBe(false);
  });
});

describe('RBAC index', () => {
  it('finds Group and ServiceAccount subjects and names the first binding in key order, as the store path does', async () => {
    const store = new MemoryStore();
    const index = new RbacIndex(store);
    await store.create(key('clusterroles', 'r'), role('ClusterRole', 'r', ['get']));
    const bind = (name: string, subject: Record<string, unknown>): KObject => ({ ...binding('ClusterRoleBinding', name, 'ClusterRole', ''), subjects: [subject] });
    await store.create(key('clusterrolebindings', 'z-group'), bind('z-group', { kind: 'Group', name: 'devs' }));
    await store.create(key('clusterrolebindings', 'a-sa'), bind('a-sa', { kind: 'ServiceAccount', name: 'ci', namespace: 'build' }));
    while (!index.ready()) await new Promise((r) => setTimeout(r, 1));
    const sa: UserInfo = { username: 'system:serviceaccount:build:ci', groups: ['devs'] };
    const attrs = { verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'x' };
    const fromIndex = createRbacAuthorizer({ objects: nothing, index });
    const fromStore = createRbacAuthorizer({ objects: objectReader(store) });
    for (const user of [sa, { username: 'dan', groups: ['devs'] }, { username: 'eve', groups: [] }]) {
      expect(await fromIndex.authorize({ user, ...attrs })).toEqual(await fromStore.authorize({ user, ...attrs }));
    }
    expect((await fromIndex.authorize({ user: sa, ...attrs })).reason).toBe(
      'RBAC: allowed by ClusterRoleBinding "a-sa" of ClusterRole "r" to ServiceAccount "ci/build"',
    );
    index.stop();
    await store.close();
  });
});

describe('RBAC decision cache (index path)', () => {
  const store = new MemoryStore();
  const index = new RbacIndex(store);
  const authorizer = createRbacAuthorizer({ objects: nothing, index });
  const ask = (user: UserInfo, verb: string, name?: string, namespace = 'ns') => authorizer.authorize({ user, verb, apiGroup: '', resource: 'configmaps', namespace, name });
  beforeAll(async () => {
    while (!index.ready()) await new Promise((r) => setTimeout(r, 1));
  });
  afterAll(() => {
    index.stop();
    return store.close();
  });
  afterEach(() => jest.restoreAllMocks());

  it('answers a repeated request from memory, and drops it the moment its RoleBinding is deleted', async () => {
    await store.create(key('roles', 'r', 'ns'), role('Role', 'r', ['get'], 'ns'));
    await store.create(key('rolebindings', 'b', 'ns'), binding('RoleBinding', 'b', 'Role', 'alice', 'ns'));
    expect((await ask(alice, 'get', 'x')).reason).toBe('RBAC: allowed by RoleBinding "b/ns" of Role "r" to User "alice"');
    const walked = jest.spyOn(index, 'bindingsFor');
    // Another name as well: no rule met names objects, so the decision holds for every name.
    expect((await ask(alice, 'get', 'x')).allowed).toBe(true);
    expect((await ask(alice, 'get', 'y')).allowed).toBe(true);
    expect(walked).not.toHaveBeenCalled();
    await store.delete(key('rolebindings', 'b', 'ns'));
    expect((await ask(alice, 'get', 'x')).allowed).toBe(false);
    expect(walked).toHaveBeenCalled();
    await store.delete(key('roles', 'r', 'ns'));
  });

  it('drops remembered allows on a change of any role, even one the decision did not read', async () => {
    await store.create(key('clusterroles', 'r'), role('ClusterRole', 'r', ['list']));
    await store.create(key('clusterrolebindings', 'b'), binding('ClusterRoleBinding', 'b', 'ClusterRole', 'alice'));
    expect((await ask(alice, 'list')).allowed).toBe(true);
    await store.create(key('roles', 'unrelated', 'other'), role('Role', 'unrelated', ['get'], 'other'));
    const walked = jest.spyOn(index, 'bindingsFor');
    expect((await ask(alice, 'list')).allowed).toBe(true);
    expect(walked).toHaveBeenCalled();
    await store.update(key('clusterroles', 'r'), role('ClusterRole', 'r', ['watch']));
    expect((await ask(alice, 'list')).allowed).toBe(false);
    await store.delete(key('clusterrolebindings', 'b'));
    await store.delete(key('clusterroles', 'r'));
  });

  it('keeps an allow by resourceNames for that name only', async () => {
    const named = { ...role('ClusterRole', 'one', ['get']), rules: [{ ...rule(['get']), resourceNames: ['a'] }] };
    await store.create(key('clusterroles', 'one'), named);
    await store.create(key('clusterrolebindings', 'one'), { ...binding('ClusterRoleBinding', 'one', 'ClusterRole', 'alice'), roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'one' } });
    expect((await ask(alice, 'get', 'a')).allowed).toBe(true);
    expect((await ask(alice, 'get', 'a')).allowed).toBe(true);
    expect((await ask(alice, 'get', 'b')).allowed).toBe(false);
    expect((await ask(alice, 'get')).allowed).toBe(false);
    await store.delete(key('clusterrolebindings', 'one'));
    await store.delete(key('clusterroles', 'one'));
  });

  it('tells users apart by every group, and by names that embed another key', async () => {
    await store.create(key('clusterroles', 'r'), role('ClusterRole', 'r', ['get']));
    await store.create(key('clusterrolebindings', 'devs'), { ...binding('ClusterRoleBinding', 'devs', 'ClusterRole', ''), subjects: [{ kind: 'Group', name: 'devs' }] });
    expect((await ask({ username: 'bob', groups: ['devs'] }, 'get')).allowed).toBe(true);
    expect((await ask({ username: 'bob', groups: [] }, 'get')).allowed).toBe(false);
    expect((await ask({ username: 'bob', groups: ['dev'] }, 'get')).allowed).toBe(false);
    expect((await ask({ username: 'bob1:14:devs', groups: [] }, 'get')).allowed).toBe(false);
    expect((await ask({ username: 'bob', groups: ['devs'] }, 'get', undefined, 'other')).allowed).toBe(true);
    expect((await ask({ username: 'bob', groups: ['devs'] }, 'list')).allowed).toBe(false);
    await store.delete(key('clusterrolebindings', 'devs'));
    expect((await ask({ username: 'bob', groups: ['devs'] }, 'get')).allowed).toBe(false);
  });
});

describe('RBAC denies and rules without store reads (index path)', () => {
  const anonymous: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  const joiner: UserInfo = { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] };

  it('refuses a stream of forbidden requests without reading the store, and obeys a RoleBinding written a moment later', async () => {
    const store = new MemoryStore();
    const index = new RbacIndex(store);
    const { reader, reads } = countedReader(store);
    const authorizer = createRbacAuthorizer({ objects: reader, index });
    await untilReady(index);
    for (let i = 0; i < 100; i++) {
      for (const user of [anonymous, joiner]) {
        expect((await authorizer.authorize({ user, verb: 'get', apiGroup: '', resource: 'secrets', namespace: 'kube-system', name: `s${i}` })).allowed).toBe(false);
      }
    }
    expect((await authorizer.authorize({ user: anonymous, verb: 'get', path: '/metrics' })).allowed).toBe(false);
    expect(reads()).toBe(0);
    // Denies are remembered until the next RBAC change: the index is not walked again.
    const walked = jest.spyOn(index, 'bindingsFor');
    expect((await authorizer.authorize({ user: joiner, verb: 'get', apiGroup: '', resource: 'secrets', namespace: 'kube-system', name: 'another' })).allowed).toBe(false);
    expect(walked).not.toHaveBeenCalled();
    walked.mockRestore();
    await store.create(key('roles', 'r', 'ns'), role('Role', 'r', ['get'], 'ns'));
    await store.create(key('rolebindings', 'b', 'ns'), binding('RoleBinding', 'b', 'Role', 'system:bootstrap:abcdef', 'ns'));
    expect((await authorizer.authorize({ user: joiner, verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'ns' })).allowed).toBe(true);
    await store.delete(key('rolebindings', 'b', 'ns'));
    expect((await authorizer.authorize({ user: joiner, verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'ns' })).allowed).toBe(false);
    expect(reads()).toBe(0);
    index.stop();
    await store.close();
  });

  /**
   * An authorizer whose index watches an empty trailing store, and which confirms denies against
   * `store` (holding ClusterRole r): what is granted there is not (yet) in what the index watches.
   */
  const trailing = async (): Promise<{ authorizer: Authorizer; store: MemoryStore; reads: () => number; close: () => Promise<void> }> => {
    const watched = new TrailingStore();
    const index = new RbacIndex(watched);
    const store = new MemoryStore();
    await store.create(key('clusterroles', 'r'), role('ClusterRole', 'r', ['get']));
    const { reader, reads } = countedReader(store);
    await untilReady(index);
    expect(index.current()).toBe(false);
    const close = async (): Promise<void> => {
      index.stop();
      await Promise.all([watched.close(), store.close()]);
    };
    return { authorizer: createRbacAuthorizer({ objects: reader, index }), store, reads, close };
  };

  it("lists a user's rules (SelfSubjectRulesReview) from the index, as the store would, without reading it", async () => {
    const store = new MemoryStore();
    const index = new RbacIndex(store);
    await store.create(key('clusterroles', 'r'), role('ClusterRole', 'r', ['get']));
    await store.create(key('roles', 'r', 'ns'), role('Role', 'r', ['watch'], 'ns'));
    await store.create(key('clusterrolebindings', 'b'), binding('ClusterRoleBinding', 'b', 'ClusterRole', 'alice'));
    await store.create(key('rolebindings', 'b', 'ns'), binding('RoleBinding', 'b', 'Role', 'alice', 'ns'));
    // A binding to a role that does not exist is reported as an error, from either source.
    await store.create(key('rolebindings', 'gone', 'ns'), { ...binding('RoleBinding', 'gone', 'Role', 'alice', 'ns'), roleRef: { apiGroup: RBAC, kind: 'Role', name: 'gone' } });
    const { reader, reads } = countedReader(store);
    const authorizer = createRbacAuthorizer({ objects: reader, index });
    await untilReady(index);
    const fromStore = await createRbacAuthorizer({ objects: objectReader(store) }).rulesFor?.(alice, 'ns');
    const fromIndex = await authorizer.rulesFor?.(alice, 'ns');
    expect(fromIndex).toEqual(fromStore);
    expect(fromIndex?.rules.map((r) => r.verbs)).toEqual([['get'], ['watch']]);
    expect(fromIndex?.errors).toHaveLength(1);
    expect(reads()).toBe(0);
    index.stop();
    await store.close();
  });

  it('confirms each deny against the store when the index may trail it (etcd replicas), so a grant there is obeyed', async () => {
    const { authorizer, store, reads, close } = await trailing();
    await store.create(key('clusterrolebindings', 'b'), binding('ClusterRoleBinding', 'b', 'ClusterRole', 'alice'));
    expect((await authorizer.authorize({ user: alice, verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'ns' })).allowed).toBe(true);
    // Each deny is confirmed, the same one again too: one that is not final is never remembered.
    for (let i = 0; i < 2; i++) {
      const before = reads();
      expect((await authorizer.authorize({ user: anonymous, verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'ns' })).allowed).toBe(false);
      expect(reads()).toBeGreaterThan(before);
    }
    await close();
  });

  it('confirms the denies that arrive together with one read of each scope, and never with reads begun before a request came', async () => {
    const { authorizer, store, reads, close } = await trailing();
    const ask = (user: UserInfo, namespace: string): Promise<boolean> =>
      authorizer.authorize({ user, verb: 'get', apiGroup: '', resource: 'configmaps', namespace }).then((d) => d.allowed);
    const flood = await Promise.all(Array.from({ length: 50 }, (_, i) => ask(i % 2 ? anonymous : joiner, i % 5 ? 'ns' : 'other')));
    expect(flood.every((allowed) => !allowed)).toBe(true);
    // ClusterRoleBindings once, the RoleBindings of each of the two namespaces once.
    expect(reads()).toBe(3);
    // A deny whose batch has begun reading; a grant acknowledged after that; a request after the grant.
    const before = reads();
    const first = ask(alice, 'ns');
    while (reads() === before) await new Promise((r) => setImmediate(r));
    await store.create(key('clusterrolebindings', 'b'), binding('ClusterRoleBinding', 'b', 'ClusterRole', 'alice'));
    const second = ask(alice, 'ns');
    expect(await first).toBe(false);
    expect(await second).toBe(true);
    await close();
  });
});
