/**
 * RBAC privilege-escalation prevention, as kube-apiserver's RBAC registry does it: a user may only
 * write a role granting, or a binding to a role holding, permissions the user already has (in the
 * object's namespace, or cluster-wide for cluster-scoped kinds), unless the authorizer grants
 * `escalate` on the role (roles) or `bind` on the referenced role (bindings). Otherwise anyone who
 * may create a RoleBinding could bind cluster-admin to themselves.
 *
 * The `escalate`/`bind` checks go through ctx.authorizer (so system:masters and the server's own
 * system context pass); the held permissions are resolved from stored bindings via ctx.objects.
 */
import type { KObject } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import { roleRefRules, rulesFor, rulesOf } from '../../authorization/rbac/rbac-authorizer.js';
import { errors } from '../../http/errors.js';
import { onlyGcFieldsChange } from '../generic/meta.js';
import type { RequestContext } from '../generic/strategy.js';
import type { PolicyRule, Role, RoleBinding } from '../../../api/rbac.js';

const rule = (p: Partial<PolicyRule>): PolicyRule => ({
  verbs: [],
  apiGroups: [],
  resources: [],
  resourceNames: [],
  nonResourceURLs: [],
  ...p,
});

/** What an aggregationRule needs: it can gather anything, so `*` on everything. */
const FULL_AUTHORITY = [
  rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }),
  rule({ verbs: ['*'], nonResourceURLs: ['*'] }),
];

/** Splits a rule into one rule per group × resource × verb (× name), and per URL × verb. */
function breakdown(r: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const g of r.apiGroups) {
    for (const res of r.resources) {
      for (const v of r.verbs) {
        if (r.resourceNames.length === 0) out.push(rule({ apiGroups: [g], resources: [res], verbs: [v] }));
        for (const n of r.resourceNames) out.push(rule({ apiGroups: [g], resources: [res], verbs: [v], resourceNames: [n] }));
      }
    }
  }
  for (const u of r.nonResourceURLs) for (const v of r.verbs) out.push(rule({ nonResourceURLs: [u], verbs: [v] }));
  return out;
}

const hasAll = (set: string[], wanted: string[]): boolean => wanted.every((w) => set.includes(w));
const starOrAll = (set: string[], wanted: string[]): boolean => set.includes('*') || hasAll(set, wanted);

/** `*` covers everything, `res/sub` is also covered by `*\/sub`. */
function resourcesCovered(owned: string[], wanted: string[]): boolean {
  if (owned.includes('*')) return true;
  return wanted.every((path) => {
    if (owned.includes(path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && owned.includes(`*/${path.slice(slash + 1)}`);
  });
}

/** Exact, or by an owned `prefix*`. */
function urlsCovered(owned: string[], wanted: string[]): boolean {
  return wanted.every((w) => owned.some((o) => o === w || (o.endsWith('*') && w.startsWith(o.replace(/\*+$/, '')))));
}

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const namesCovered =
    sub.resourceNames.length === 0 ? owner.resourceNames.length === 0 : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, sub.resourceNames);
  return (
    starOrAll(owner.verbs, sub.verbs) &&
    starOrAll(owner.apiGroups, sub.apiGroups) &&
    resourcesCovered(owner.resources, sub.resources) &&
    urlsCovered(owner.nonResourceURLs, sub.nonResourceURLs) &&
    namesCovered
  );
}

/** The broken-down parts of `requested` that no rule in `owned` covers (validation.Covers upstream). */
export function uncoveredRules(owned: PolicyRule[], requested: PolicyRule[]): PolicyRule[] {
  return requested.flatMap(breakdown).filter((sub) => !owned.some((o) => ruleCovers(o, sub)));
}

/** Merges broken-down rules on the same group, resource and name into one rule with all verbs. */
function compact(rules: PolicyRule[]): PolicyRule[] {
  const merged = new Map<string, PolicyRule>();
  const rest: PolicyRule[] = [];
  for (const r of rules) {
    const simple = r.apiGroups.length === 1 && r.resources.length === 1 && r.nonResourceURLs.length === 0 && r.resourceNames.length <= 1;
    if (!simple) {
      rest.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups[0], r.resources[0], r.resourceNames[0] ?? '']);
    const seen = merged.get(key);
    if (seen) seen.verbs.push(...r.verbs);
    else merged.set(key, { ...r, verbs: [...r.verbs] });
  }
  return [...rest, ...merged.values()];
}

/** Go's `%q` of a []string: `["a" "b"]`. */
const quoted = (list: string[]): string => `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;

/** Upstream's CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`, empty fields left out. */
export function compactString(r: PolicyRule): string {
  const parts: [string, string[]][] = [
    ['APIGroups', r.apiGroups],
    ['Resources', r.resources],
    ['NonResourceURLs', r.nonResourceURLs],
    ['ResourceNames', r.resourceNames],
    ['Verbs', r.verbs],
  ];
  return `{${parts
    .filter(([, v]) => v.length > 0)
    .map(([k, v]) => `${k}:${quoted(v)}`)
    .join(', ')}}`;
}

interface Scope {
  info: ResourceInfo;
  name: string;
  namespace: string;
}

const forbidden = (s: Scope, message: string): Error =>
  errors.admissionForbidden({ group: s.info.group, resource: s.info.plural, name: s.name }, message);

/** Throws 403 unless the user's own rules in the scope cover `rules` (ConfirmNoEscalation upstream). */
async function confirmNoEscalation(s: Scope, rules: PolicyRule[], ctx: RequestContext): Promise<void> {
  const owned = await rulesFor(ctx.objects, ctx.user, s.namespace);
  const missing = uncoveredRules(owned.rules, rules);
  if (missing.length === 0) return;
  const lines = [...new Set(compact(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(ctx.user.username)} (groups=${quoted(ctx.user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (owned.errors.length > 0) msg += `; resolution errors: [${owned.errors.join(' ')}]`;
  throw forbidden(s, msg);
}

function scopeOf(info: ResourceInfo, obj: KObject): Scope {
  return { info, name: obj.metadata?.name ?? '', namespace: info.namespaced ? (obj.metadata?.namespace ?? '') : '' };
}

const hasAggregationRule = (obj: Role): boolean => (obj.aggregationRule?.clusterRoleSelectors ?? []).length > 0;

/** Admission of a Role or ClusterRole create (`old` undefined) or update. */
export async function admitRole(info: ResourceInfo, obj: Role, old: Role | undefined, ctx: RequestContext): Promise<void> {
  if (old && onlyGcFieldsChange(obj, old)) return;
  const s = scopeOf(info, obj);
  // Upstream asks with the request's name, which a POST to the collection does not have (a PUT that creates does).
  const escalate = await ctx.authorizer.authorize({
    user: ctx.user,
    verb: 'escalate',
    apiGroup: info.group,
    resource: info.plural,
    namespace: s.namespace || undefined,
    name: ctx.requestName,
  });
  if (escalate.allowed) return;
  await confirmNoEscalation(s, rulesOf(obj), ctx);
  if (!info.namespaced && hasAggregationRule(obj) && !(old && hasAggregationRule(old))) {
    const owned = await rulesFor(ctx.objects, ctx.user, '');
    if (uncoveredRules(owned.rules, FULL_AUTHORITY).length > 0) {
      throw forbidden(s, 'must have cluster-admin privileges to use the aggregationRule');
    }
  }
}

/** Admission of a RoleBinding or ClusterRoleBinding create (`old` undefined) or update. */
export async function admitBinding(info: ResourceInfo, obj: RoleBinding, old: RoleBinding | undefined, ctx: RequestContext): Promise<void> {
  if (old && onlyGcFieldsChange(obj, old)) return;
  const s = scopeOf(info, obj);
  const ref = obj.roleRef ?? {};
  const kind = ref.kind;
  if (kind === 'Role' || kind === 'ClusterRole') {
    const bind = await ctx.authorizer.authorize({
      user: ctx.user,
      verb: 'bind',
      apiGroup: ref.apiGroup ?? '',
      resource: kind === 'Role' ? 'roles' : 'clusterroles',
      namespace: s.namespace || undefined,
      name: ref.name ?? '',
    });
    if (bind.allowed) return;
  }
  const found = await roleRefRules(ctx.objects, ref, s.namespace);
  if ('error' in found) throw forbidden(s, found.error);
  await confirmNoEscalation(s, found.rules, ctx);
}
