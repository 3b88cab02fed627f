/** kube-apiserver's etcd key layout, and the way back to Store keys. */
import { EtcdKeys } from './etcd-keys.js';
import { storageKey } from '../store.js';

const keys = new EtcdKeys('/registry');

it.each([
  [storageKey('', 'configmaps', 'default', 'a'), '/registry/configmaps/default/a'],
  [storageKey('', 'namespaces', undefined, 'default'), '/registry/namespaces/default'],
  [storageKey('', 'nodes', undefined, 'n1'), '/registry/minions/n1'],
  [storageKey('', 'events', 'default', 'e'), '/registry/events/default/e'],
  [storageKey('events.k8s.io', 'events', 'default', 'e'), '/registry/events.k8s.io/events/default/e'],
  [storageKey('certificates.k8s.io', 'certificatesigningrequests', undefined, 'csr-1'), '/registry/certificatesigningrequests/csr-1'],
  [storageKey('rbac.authorization.k8s.io', 'clusterrolebindings', undefined, 'x'), '/registry/clusterrolebindings/x'],
  [storageKey('apps', 'controllerrevisions', 'kube-system', 'r'), '/registry/controllerrevisions/kube-system/r'],
  [storageKey('coordination.k8s.io', 'leases', 'kube-node-lease', 'n1'), '/registry/leases/kube-node-lease/n1'],
  [storageKey('example.com', 'widgets', 'ns', 'w'), '/registry/example.com/widgets/ns/w'],
])('keeps %s at %s, and reads it back', (storeKey, etcdKey) => {
  expect(keys.toEtcd(storeKey)).toBe(etcdKey);
  expect(keys.reverse('/registry/')(etcdKey)).toBe(storeKey);
  const collection = storeKey.slice(0, storeKey.lastIndexOf('/') + 1);
  expect(keys.reverse(collection)(etcdKey)).toBe(storeKey);
});

it('maps collection prefixes so that etcd ranges hold exactly their objects', () => {
  expect(keys.toEtcd(storageKey('', 'events', undefined))).toBe('/registry/events/');
  expect(keys.toEtcd(storageKey('', 'secrets', 'ns'))).toBe('/registry/secrets/ns/');
  expect(keys.toEtcd('/registry/')).toBe('/registry/');
  // Keys outside /registry/ (the conformance suite's) stay as they are under the prefix.
  expect(keys.toEtcd('/r/a')).toBe('/registry/r/a');
  expect(keys.reverse('/r/')('/registry/r/a')).toBe('/r/a');
  expect(new EtcdKeys('/kube-identity').toEtcd(storageKey('', 'secrets', 'ns', 's'))).toBe('/kube-identity/secrets/ns/s');
});

it('refuses prefixes above a resource and groups it could not read back', () => {
  expect(() => keys.toEtcd('/registry/core/')).toThrow('above a resource');
  expect(() => keys.toEtcd('/registry/batch/jobs/')).toThrow('unknown undotted group');
  expect(() => new EtcdKeys('/registry/')).toThrow();
  // Refused every time, not only the first.
  expect(() => keys.toEtcd('/registry/batch/jobs/')).toThrow('unknown undotted group');
  expect(() => keys.toEtcd('/registry/core')).toThrow('above a resource');
});

it("maps a resource's keys and prefixes alike however often it is asked, each prefix to its own etcd prefix", () => {
  const other = new EtcdKeys('/other');
  for (let i = 0; i < 3; i++) {
    expect(keys.toEtcd('/registry/core/nodes')).toBe('/registry/minions');
    expect(keys.toEtcd(`/registry/core/nodes/n${i}`)).toBe(`/registry/minions/n${i}`);
    expect(other.toEtcd(`/registry/core/nodes/n${i}`)).toBe(`/other/minions/n${i}`);
    expect(keys.toEtcd(`/registry/example.com/widgets/ns/w${i}`)).toBe(`/registry/example.com/widgets/ns/w${i}`);
  }
});
