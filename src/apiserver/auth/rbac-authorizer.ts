/**
 * The RBAC authorizer (rbac.authorization.k8s.io/v1 semantics, apiserver.md §7.3), reading
 * bindings and roles through the ObjectReader on every decision: always current, and with the
 * handful of bindings this server holds, cheap. ClusterRoleBindings are visited first, then
 * RoleBindings of the request's namespace, and the first matching rule decides, with upstream's
 * reason text. `system:masters` bypasses RBAC as kube-apiserver's privileged-group authorizer does.
 */
import type { KObject, UserInfo } from '../../api/meta.js';
import type { AuthorizationAttributes, Authorizer, Decision, ObjectReader } from '../registry/strategy.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, record, ROLE_BINDINGS, ROLES, str, strings } from './objects.js';
import { serviceAccountUsername } from './sa-token.js';

export const MASTERS_GROUP = 'system:masters';

export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

function rulesOf(role: KObject | undefined): PolicyRule[] {
  const rules = Array.isArray(role?.rules) ? (role.rules as unknown[]) : [];
  return rules.map((r) => {
    const o = record(r);
    return {
      verbs: strings(o.verbs),
      apiGroups: strings(o.apiGroups),
      resources: strings(o.resources),
      resourceNames: strings(o.resourceNames),
      nonResourceURLs: strings(o.nonResourceURLs),
    };
  });
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

function subjectsOf(binding: KObject): Subject[] {
  const subjects = Array.isArray(binding.subjects) ? (binding.subjects as unknown[]) : [];
  return subjects.map((s) => {
    const o = record(s);
    return { kind: str(o.kind) ?? '', name: str(o.name) ?? '', namespace: str(o.namespace) };
  });
}

/** The subject in `binding` (of namespace `bindingNs`) that names `user`, if any. */
function matchingSubject(user: UserInfo, binding: KObject, bindingNs: string): Subject | undefined {
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
}

export function createRbacAuthorizer(o: RbacAuthorizerOptions): Authorizer {
  async function roleRules(ref: Record<string, unknown>, namespace: string): Promise<PolicyRule[]> {
    const name = str(ref.name) ?? '';
    if (str(ref.kind) === 'ClusterRole') return rulesOf(await o.objects.get(CLUSTER_ROLES, undefined, name));
    if (str(ref.kind) === 'Role' && namespace) return rulesOf(await o.objects.get(ROLES, namespace, name));
    return [];
  }

  async function visit(a: AuthorizationAttributes, binding: KObject, namespace: string): Promise<string | undefined> {
    const subject = matchingSubject(a.user, binding, namespace);
    if (!subject) return undefined;
    const ref = record(binding.roleRef);
    const rules = await roleRules(ref, namespace);
    if (!rules.some((r) => ruleAllows(a, r))) return undefined;
    const name = binding.metadata?.name ?? '';
    const what = namespace ? `RoleBinding "${name}/${namespace}"` : `ClusterRoleBinding "${name}"`;
    return `RBAC: allowed by ${what} of ${str(ref.kind) ?? ''} "${str(ref.name) ?? ''}" to ${describeSubject(subject, namespace)}`;
  }

  return {
    async authorize(a): Promise<Decision> {
      if (a.user.groups.includes(MASTERS_GROUP)) return { allowed: true };
      for (const b of await o.objects.list(CLUSTER_ROLE_BINDINGS, undefined)) {
        const reason = await visit(a, b, '');
        if (reason) return { allowed: true, reason };
      }
      if (a.resource !== undefined && a.namespace) {
        for (const b of await o.objects.list(ROLE_BINDINGS, a.namespace)) {
          const reason = await visit(a, b, a.namespace);
          if (reason) return { allowed: true, reason };
        }
      }
      return { allowed: false, reason: '' };
    },
  };
}
