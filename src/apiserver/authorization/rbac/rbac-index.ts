/**
 * An in-memory index of the RBAC objects, for the authorizer: ClusterRoleBindings and RoleBindings
 * by the users and groups their subjects name, and the parsed rules of each Role and ClusterRole
 * by key. Listing every binding and reading roles on each request cost a store range per decision;
 * the index answers from maps, as kube-apiserver's RBAC authorizer answers from its informers.
 *
 * Each of the four kinds is kept by a store reflector (storage/reflector.ts: one range, then a watch
 * from its revision, relisted when the watch reports Compacted or fails), so it follows writes made
 * by other API server replicas on etcd as well as this one's. In-process stores deliver a write's
 * watch event before any later request runs (the event is published when the write commits), so
 * the index is current for the next decision (`current()`); on etcd it may trail by a watch round
 * trip, which the authorizer covers by confirming a deny against the store.
 */
import type { UserInfo } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import { Reflector } from '../../storage/reflector.js';
import { storageKey, type Store, type StoreEvent, type StoredObject } from '../../storage/store.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES } from '../../authentication/resource-infos.js';
import { serviceAccountUsername } from '../../authentication/sa-token.js';
import { rulesOf } from './rbac-authorizer.js';
import type { PolicyRule, Role, RoleBinding } from '../../../api/rbac.js';

const prefixOf = (info: ResourceInfo): string => storageKey(info.group, info.plural, undefined);

/**
 * The index keys a subject is found under: `u:<username>` for a User, and for a ServiceAccount
 * its username (both match on the caller's username); `g:<group>` for a Group. The authorizer
 * still matches each candidate binding's subjects itself, so a superset is harmless.
 */
function subjectKeys(binding: RoleBinding, bindingNs: string): string[] {
  const keys: string[] = [];
  for (const s of binding.subjects ?? []) {
    const name = s.name ?? '';
    if (s.kind === 'User') keys.push(`u:${name}`);
    else if (s.kind === 'Group') keys.push(`g:${name}`);
    else if (s.kind === 'ServiceAccount') {
      const ns = s.namespace || bindingNs;
      if (ns !== '') keys.push(`u:${serviceAccountUsername(ns, name)}`);
    }
  }
  return keys;
}

/**
 * One kind's objects by storage key. Every stored object passed its kind's schema when it was
 * written, so a Role or a binding from the store reads as its type.
 */
interface KindState {
  info: ResourceInfo;
  objects: Map<string, Role | RoleBinding>;
}

export class RbacIndex {
  private readonly kinds: KindState[];
  private readonly reflectors: Reflector[];
  /** Binding keys by `<binding namespace or ''>\0<subject key>`. */
  private readonly bySubject = new Map<string, Set<string>>();
  /** Parsed rules of every Role and ClusterRole, by storage key. */
  private readonly rules = new Map<string, PolicyRule[]>();
  private changes = 0;
  private readonly deliversBeforeAck: boolean;

  constructor(store: Store) {
    this.deliversBeforeAck = store.deliversBeforeAck === true;
    this.kinds = [CLUSTER_ROLES, ROLES, CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS].map((info) => ({ info, objects: new Map() }));
    this.reflectors = this.kinds.map(
      (kind) => new Reflector(store, prefixOf(kind.info), { replace: (items) => this.replace(kind, items), apply: (e) => this.apply(kind, e) }),
    );
  }

  /** Counts every change of any kind's objects: what was decided at one generation holds until the next. */
  generation(): number {
    return this.changes;
  }

  /** Whether every kind was listed and is being watched: until then, callers read the store. */
  ready(): boolean {
    return this.reflectors.every((r) => r.synced);
  }

  /**
   * Whether the index holds every RBAC write acknowledged before now, so that what it does not
   * grant, the store would not grant either: synced, on a store that delivers a write's watch
   * events before acknowledging it (Store.deliversBeforeAck).
   */
  current(): boolean {
    return this.deliversBeforeAck && this.ready();
  }

  /**
   * The bindings in `bindingNs` ('' for ClusterRoleBindings) that may name `user`, in storage key
   * order (the order a store range gives, so the first matching rule is the same one).
   */
  bindingsFor(user: UserInfo, bindingNs: string): RoleBinding[] {
    const kind = this.kindOf(bindingNs ? ROLE_BINDINGS : CLUSTER_ROLE_BINDINGS);
    const keys = new Set<string>();
    for (const sk of [`u:${user.username}`, ...user.groups.map((g) => `g:${g}`)]) {
      for (const key of this.bySubject.get(`${bindingNs}\0${sk}`) ?? []) keys.add(key);
    }
    const out: RoleBinding[] = [];
    for (const key of [...keys].sort()) {
      const binding = kind.objects.get(key);
      if (binding) out.push(binding);
    }
    return out;
  }

  /** The parsed rules of a Role (namespace given) or ClusterRole, or undefined when it does not exist. */
  roleRules(info: ResourceInfo, namespace: string | undefined, name: string): PolicyRule[] | undefined {
    return this.rules.get(storageKey(info.group, info.plural, info.namespaced ? namespace : undefined, name));
  }

  stop(): void {
    for (const reflector of this.reflectors) reflector.stop();
  }

  private kindOf(info: ResourceInfo): KindState {
    const kind = this.kinds.find((k) => k.info === info);
    if (!kind) throw new Error(`RBAC index does not hold ${info.plural}`);
    return kind;
  }

  private replace(kind: KindState, items: StoredObject[]): void {
    for (const key of [...kind.objects.keys()]) this.remove(kind, key);
    for (const item of items) this.put(kind, item.key, item.object);
  }

  private apply(kind: KindState, e: StoreEvent): void {
    if (e.type === 'DELETED') this.remove(kind, e.key);
    else this.put(kind, e.key, e.object);
  }

  private isBinding(kind: KindState): boolean {
    return kind.info === CLUSTER_ROLE_BINDINGS || kind.info === ROLE_BINDINGS;
  }

  private put(kind: KindState, key: string, obj: Role | RoleBinding): void {
    this.remove(kind, key);
    this.changes++;
    kind.objects.set(key, obj);
    if (!this.isBinding(kind)) {
      this.rules.set(key, rulesOf(obj));
      return;
    }
    const ns = kind.info.namespaced ? (obj.metadata?.namespace ?? '') : '';
    for (const sk of subjectKeys(obj, ns)) {
      const id = `${ns}\0${sk}`;
      let set = this.bySubject.get(id);
      if (!set) this.bySubject.set(id, (set = new Set()));
      set.add(key);
    }
  }

  private remove(kind: KindState, key: string): void {
    const old = kind.objects.get(key);
    if (!old) return;
    this.changes++;
    kind.objects.delete(key);
    if (!this.isBinding(kind)) {
      this.rules.delete(key);
      return;
    }
    const ns = kind.info.namespaced ? (old.metadata?.namespace ?? '') : '';
    for (const sk of subjectKeys(old, ns)) {
      const id = `${ns}\0${sk}`;
      const set = this.bySubject.get(id);
      set?.delete(key);
      if (set?.size === 0) this.bySubject.delete(id);
    }
  }
}
