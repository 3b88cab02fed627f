/**
 * The RBAC authorizer (rbac.authorization.k8s.io/v1 semantics, apiserver.md §7.3). Decisions come
 * from the RbacIndex (rbac-index.ts) when it is given and synced, and otherwise from the
 * ObjectReader (bindings listed and roles read per decision). ClusterRoleBindings are visited
 * first, then RoleBindings of the request's namespace, and the first matching rule decides, with
 * upstream's reason text. `system:masters` bypasses RBAC as kube-apiserver's privileged-group
 * authorizer does.
 */
import type { UserInfo } from '../../../api/meta.js';
import { errors } from '../../http/errors.js';
import { isPromise, promised, then, type MaybePromise } from '../../../lib/maybe-promise.js';
import type { AuthorizationAttributes, Authorizer, Decision } from '../authorizer.js';
import type { ObjectReader } from '../../authentication/types.js';
import type { ResourceInfo } from '../../../api/resources.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES } from '../../authentication/resource-infos.js';
import { serviceAccountUsername } from '../../authentication/sa-token.js';
import type { RbacIndex } from './rbac-index.js';
import { DecisionCache } from './decision-cache.js';
import { DenyConfirmations } from './deny-confirmations.js';
import type { PolicyRule, Role, RoleBinding, RoleRef as RoleRefField } from '../../../api/rbac.js';

export const MASTERS_GROUP = 'system:masters';

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

/** The rules of a Role or ClusterRole object. */
export function rulesOf(role: Role | undefined): PolicyRule[] {
  return (role?.rules ?? []).map((r) => ({
    verbs: r.verbs ?? [],
    apiGroups: r.apiGroups ?? [],
    resources: r.resources ?? [],
    resourceNames: r.resourceNames ?? [],
    nonResourceURLs: r.nonResourceURLs ?? [],
  }));
}

function has(list: string[], value: string): boolean {
  return list.includes('*') || list.includes(value);
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return rule.resources.some(
    (r) => r === '*' || r === combined || (subresource !== '' && r === `*/${subresource}`),
  );
}

function nonResourceMatches(rule: PolicyRule, path: string): boolean {
  return rule.nonResourceURLs.some(
    (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
  );
}

/** Whether one rule allows the request (rbac.RuleAllows upstream). */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (a.resource !== undefined) {
    return (
      has(rule.verbs, a.verb) &&
      has(rule.apiGroups, a.apiGroup ?? '') &&
      resourceMatches(rule, a.resource, a.subresource ?? '') &&
      (rule.resourceNames.length === 0 || rule.resourceNames.includes(a.name ?? ''))
    );
  }
  return has(rule.verbs, a.verb) && nonResourceMatches(rule, a.path ?? '');
}

function subjectsOf(binding: RoleBinding): Subject[] {
  return (binding.subjects ?? []).map((s) => ({ kind: s.kind ?? '', name: s.name ?? '', namespace: s.namespace }));
}

/** The subject in `binding` (of namespace `bindingNs`) that names `user`, if any. */
function matchingSubject(user: UserInfo, binding: RoleBinding, bindingNs: string): Subject | undefined {
  return subjectsOf(binding).find((s) => {
    if (s.kind === 'User') return s.name === user.username;
    if (s.kind === 'Group') return user.groups.includes(s.name);
    if (s.kind === 'ServiceAccount') {
      const ns = s.namespace || bindingNs;
      return ns !== '' && user.username === serviceAccountUsername(ns, s.name);
    }
    return false;
  });
}

function describeSubject(s: Subject, bindingNs: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} "${s.name}/${s.namespace || bindingNs}"`;
  return `${s.kind} "${s.name}"`;
}

export interface RbacAuthorizerOptions {
  objects: ObjectReader;
  /** Answers decisions from memory once synced; without it every decision reads the store. */
  index?: RbacIndex;
}

type RoleRef = { info: ResourceInfo; namespace: string | undefined; name: string };

/** The role a binding's roleRef names, or why it cannot name one (an unknown kind, a Role outside a namespace). */
function roleOfRef(ref: RoleRefField | undefined, namespace: string): RoleRef | { error: string } {
  const kind = ref?.kind;
  const name = ref?.name ?? '';
  const info = kind === 'ClusterRole' ? CLUSTER_ROLES : kind === 'Role' ? ROLES : undefined;
  if (!info) return { error: `unsupported role reference kind: ${JSON.stringify(kind ?? '')}` };
  if (info.namespaced && !namespace) return { error: missingRole({ info, namespace, name }) };
  return { info, namespace: info.namespaced ? namespace : undefined, name };
}

function missingRole({ info, name }: RoleRef): string {
  return errors.notFound({ group: info.group, resource: info.plural, name }).message;
}

/**
 * The rules a binding's roleRef points at (GetRoleReferenceRules upstream), or an error text when
 * the role does not exist or the kind is unknown.
 */
export async function roleRefRules(objects: ObjectReader, ref: RoleRefField | undefined, namespace: string): Promise<RoleRules> {
  const r = roleOfRef(ref, namespace);
  if ('error' in r) return r;
  const role = await objects.get(r.info, r.namespace, r.name);
  return role ? { rules: rulesOf(role) } : { error: missingRole(r) };
}

/** roleRefRules on the index's parsed rules. */
function indexedRoleRules(index: RbacIndex, ref: RoleRefField | undefined, namespace: string): RoleRules {
  const r = roleOfRef(ref, namespace);
  if ('error' in r) return r;
  const rules = index.roleRules(r.info, r.namespace, r.name);
  return rules ? { rules } : { error: missingRole(r) };
}

/** A binding that names `user`, with the rules of the role it grants (or why they cannot be read). */
interface Grant {
  binding: RoleBinding;
  /** '' for a ClusterRoleBinding. */
  namespace: string;
  subject: Subject;
  role: { rules: PolicyRule[] } | { error: string };
}

/** Where grants are read from: the store through an ObjectReader (promises), or the RbacIndex (at once). */
export interface GrantSource {
  /** The bindings of `bindingNs` ('' for ClusterRoleBindings), in key order; a superset of those naming `user` is fine. */
  bindings(user: UserInfo, bindingNs: string): MaybePromise<RoleBinding[]>;
  role(ref: RoleRefField | undefined, namespace: string): MaybePromise<RoleRules>;
}

export type RoleRules = { rules: PolicyRule[] } | { error: string };

function storeSource(objects: ObjectReader): GrantSource {
  return {
    bindings: (_user, bindingNs) => (bindingNs ? objects.list(ROLE_BINDINGS, bindingNs) : objects.list(CLUSTER_ROLE_BINDINGS, undefined)),
    role: (ref, namespace) => roleRefRules(objects, ref, namespace),
  };
}

function indexSource(index: RbacIndex): GrantSource {
  return {
    bindings: (user, bindingNs) => index.bindingsFor(user, bindingNs),
    role: (ref, namespace) => indexedRoleRules(index, ref, namespace),
  };
}

/**
 * Walks the bindings that name `user` — ClusterRoleBindings, then the RoleBindings of `namespace`
 * when given — resolving each one's role, until `visit` returns something (VisitRulesFor upstream).
 * The authorizer and the escalation checks share it, so both see exactly the same grants. On a
 * source that answers at once (the index) the walk is synchronous; it waits only for what a source
 * gives as a promise.
 */
function visitGrants<T>(
  source: GrantSource,
  user: UserInfo,
  namespace: string,
  visit: (g: Grant) => T | undefined,
): MaybePromise<T | undefined> {
  // RoleBindings are only read when no ClusterRoleBinding settled the question.
  const scope = (bindingNs: string, next: string | undefined): MaybePromise<T | undefined> =>
    then(source.bindings(user, bindingNs), (bindings) =>
      then(visitBindings({ source, user, bindingNs, visit }, bindings, 0), (out) => (out !== undefined || next === undefined ? out : scope(next, undefined))),
    );
  return namespace ? scope('', namespace) : scope('', undefined);
}

/** visitGrants over one scope's bindings, from the `i`th on. */
function visitBindings<T>(
  walk: { source: GrantSource; user: UserInfo; bindingNs: string; visit: (g: Grant) => T | undefined },
  bindings: RoleBinding[],
  i: number,
): MaybePromise<T | undefined> {
  const { source, user, bindingNs, visit } = walk;
  for (; i < bindings.length; i++) {
    const binding = bindings[i] as RoleBinding;
    const subject = matchingSubject(user, binding, bindingNs);
    if (!subject) continue;
    const role = source.role(binding.roleRef, bindingNs);
    if (isPromise(role)) {
      const at = i;
      return role.then((r) => {
        const out = visit({ binding, namespace: bindingNs, subject, role: r });
        return out !== undefined ? out : visitBindings(walk, bindings, at + 1);
      });
    }
    const out = visit({ binding, namespace: bindingNs, subject, role });
    if (out !== undefined) return out;
  }
  return undefined;
}

type GrantedRules = { rules: PolicyRule[]; errors: string[] };

async function collectRules(source: GrantSource, user: UserInfo, namespace: string): Promise<GrantedRules> {
  const out: GrantedRules = { rules: [], errors: [] };
  await visitGrants(source, user, namespace, ({ role }) => {
    if ('rules' in role) out.rules.push(...role.rules);
    else out.errors.push(role.error);
    return undefined;
  });
  return out;
}

/**
 * Every rule granted to `user` cluster-wide, plus in `namespace` when given (RulesFor upstream),
 * with the errors of bindings whose role is missing: escalation checks report those.
 */
export function rulesFor(objects: ObjectReader, user: UserInfo, namespace: string): Promise<GrantedRules> {
  return collectRules(storeSource(objects), user, namespace);
}

/** Upstream's reason for an allow: which binding of which role to which subject. */
function allowReason({ binding, namespace, subject }: Grant): string {
  const name = binding.metadata?.name ?? '';
  const what = namespace ? `RoleBinding "${name}/${namespace}"` : `ClusterRoleBinding "${name}"`;
  return `RBAC: allowed by ${what} of ${binding.roleRef?.kind ?? ''} "${binding.roleRef?.name ?? ''}" to ${describeSubject(subject, namespace)}`;
}

export function createRbacAuthorizer(o: RbacAuthorizerOptions): Authorizer {
  const fromStore = storeSource(o.objects);
  const fromIndex = o.index && indexSource(o.index);
  const cache = new DecisionCache();
  const confirmations = new DenyConfirmations(fromStore);
  /** The decision, and whether a rule with resourceNames was met on the way (the name then matters). */
  const decide = (source: GrantSource, a: AuthorizationAttributes): MaybePromise<{ decision: Decision; byName: boolean }> => {
    // Non-resource requests are cluster-scoped: only ClusterRoleBindings can grant them.
    const namespace = a.resource !== undefined ? (a.namespace ?? '') : '';
    let byName = false;
    const reason = visitGrants(source, a.user, namespace, (g) => {
      if (!('rules' in g.role)) return undefined;
      for (const r of g.role.rules) {
        if (r.resourceNames.length > 0) byName = true;
        if (ruleAllows(a, r)) return allowReason(g);
      }
      return undefined;
    });
    return then(reason, (allowed) => ({ decision: allowed ? { allowed: true, reason: allowed } : { allowed: false, reason: '' }, byName }));
  };
  const fromStoreOnly = (source: GrantSource, a: AuthorizationAttributes): MaybePromise<Decision> => then(decide(source, a), (d) => d.decision);
  /** Masters, a remembered decision and the index's answer at once; a read of the store, or a deny's confirmation, as a promise. */
  const authorizeNow = (a: AuthorizationAttributes): MaybePromise<Decision> => {
    if (a.user.groups.includes(MASTERS_GROUP)) return { allowed: true };
    const index = o.index;
    if (!fromIndex || !index?.ready()) return fromStoreOnly(fromStore, a);
    const generation = index.generation();
    const cached = cache.get(a, generation);
    if (cached) return cached;
    return then(decide(fromIndex, a), ({ decision, byName }) => {
      // An index that holds every acknowledged write denies alone (and its deny is remembered
      // until the next RBAC change), so a stream of forbidden requests (an anonymous client, a join
      // token) costs no store read. On etcd a grant written through another replica may not have
      // reached this one's watch yet: there a deny is confirmed against the store, so a new grant
      // is never refused, with the denies that arrive together sharing one batch of reads.
      if (!decision.allowed && !index.current()) return confirmations.join().then((store) => fromStoreOnly(store, a));
      cache.set(a, generation, decision, byName);
      return decision;
    });
  };
  return {
    authorize: (a) => promised(() => authorizeNow(a)),
    authorizeNow,
    // RBAC lists everything it grants; a binding to a missing role is an error, not incompleteness.
    // From an index that holds every acknowledged write, so a SelfSubjectRulesReview (which any
    // authenticated caller may send) costs no store list either.
    rulesFor: async (user, namespace) => {
      const source = fromIndex && o.index?.current() ? fromIndex : fromStore;
      return { ...(await collectRules(source, user, namespace)), incomplete: false };
    },
  };
}
