/**
 * Storage keys as kube-apiserver lays them out in etcd, so `etcdctl get --prefix /registry` reads
 * like a real cluster's. The Store's keys name the group (`/registry/<group|core>/<plural>/...`,
 * see storageKey); kube-apiserver keeps a built-in resource at `<prefix>/<plural>/...` whatever
 * its group (nodes at `minions`), and a resource of any other group at `<prefix>/<group>/<plural>/...`
 * as it does for custom resources. A built-in plural that a core resource also uses (events.k8s.io
 * events) keeps its group so the two never mix: events.k8s.io Events are stored as the core ones
 * (registry/events/), and only data from before that sits under `/registry/events.k8s.io/events/`.
 *
 * Keys outside `/registry/` (the conformance suite's) are kept as they are under the prefix; a range
 * or watch reads them back only through their own prefix.
 */
import { RESOURCES } from '../../../api/resources.js';

const REGISTRY = '/registry/';
const CORE_PATHS: Readonly<Record<string, string>> = { nodes: 'minions' };
const CORE_PLURALS = new Set(RESOURCES.filter((r) => r.group === '').map((r) => r.plural));
/** Group of each built-in non-core plural stored at `<prefix>/<plural>`. */
const BUILTIN_GROUPS = new Map(RESOURCES.filter((r) => r.group !== '' && !CORE_PLURALS.has(r.plural)).map((r) => [r.plural, r.group]));
const CORE_BY_PATH = new Map(Object.entries(CORE_PATHS).map(([plural, p]) => [p, plural]));

/** The etcd path of a resource collection, relative to the prefix. */
function resourcePath(group: string, plural: string): string {
  if (group === 'core') return CORE_PATHS[plural] ?? plural;
  return BUILTIN_GROUPS.get(plural) === group ? plural : `${group}/${plural}`;
}

export class EtcdKeys {
  /** The etcd path of each `<group>/<plural>` seen, under the prefix: every write and watch event names one. */
  private readonly resources = new Map<string, string>();

  /** `prefix` without a trailing '/', e.g. `/registry`. */
  constructor(readonly prefix: string) {
    if (!prefix.startsWith('/') || prefix.endsWith('/')) throw new Error(`etcd prefix must start and not end with '/': ${prefix}`);
  }

  /** The etcd key of a Store key, or of a Store prefix at or below a resource (or `/registry/` itself). */
  toEtcd(key: string): string {
    if (!key.startsWith(REGISTRY)) return this.prefix + key;
    if (key === REGISTRY) return `${this.prefix}/`;
    const groupEnd = key.indexOf('/', REGISTRY.length);
    const pluralEnd = groupEnd < 0 ? -1 : key.indexOf('/', groupEnd + 1);
    const resource = pluralEnd < 0 ? key.slice(REGISTRY.length) : key.slice(REGISTRY.length, pluralEnd);
    let path = this.resources.get(resource);
    if (path === undefined) {
      path = this.resourcePrefix(key, resource);
      this.resources.set(resource, path);
    }
    return pluralEnd < 0 ? path : path + key.slice(pluralEnd);
  }

  /** `<prefix>/<path>` of the resource `<group>/<plural>` that `key` names; throws for one it could not read back. */
  private resourcePrefix(key: string, resource: string): string {
    const [group, plural] = resource.split('/');
    if (!group || plural === undefined || plural === '') throw new Error(`storage key above a resource: ${key}`);
    if (group !== 'core' && !group.includes('.') && BUILTIN_GROUPS.get(plural) !== group) {
      // An undotted group would be read back as a core plural.
      throw new Error(`storage key of an unknown undotted group: ${key}`);
    }
    return `${this.prefix}/${resourcePath(group, plural)}`;
  }

  /** How to turn the etcd keys a range or watch on `storePrefix` returns back into Store keys. */
  reverse(storePrefix: string): (etcdKey: string) => string {
    if (storePrefix === REGISTRY) return (etcdKey) => this.registryKey(etcdKey);
    const etcdPrefix = this.toEtcd(storePrefix);
    return (etcdKey) => storePrefix + etcdKey.slice(etcdPrefix.length);
  }

  /** The Store key of an etcd key holding a `/registry/` object. */
  private registryKey(etcdKey: string): string {
    const rel = etcdKey.slice(this.prefix.length + 1);
    const slash = rel.indexOf('/');
    const first = slash < 0 ? rel : rel.slice(0, slash);
    const rest = slash < 0 ? '' : rel.slice(slash);
    if (first.includes('.')) return REGISTRY + rel;
    const group = BUILTIN_GROUPS.get(first);
    if (group) return `${REGISTRY}${group}/${rel}`;
    return `${REGISTRY}core/${CORE_BY_PATH.get(first) ?? first}${rest}`;
  }
}
