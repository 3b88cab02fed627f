/**
 * kube-apiserver's bootstrap-roles reconciliation at start, in its union form: a default role that
 * is already stored gains the rules of the default it lacks, a default binding the subjects it
 * lacks; nothing is taken away. A default changed by a new release, or by the options the server
 * runs with (the controller's signer names under `up`), so reaches an existing store. Only defaults
 * marked `rbac.authorization.kubernetes.io/autoupdate: "true"`, and never a stored object whose
 * annotation an operator set to "false" (upstream's opt-out).
 */
import type { KObject } from '../../../api/meta.js';
import type { PolicyRule, Role, RoleBinding, Subject } from '../../../api/rbac.js';
import { rulesOf } from '../../authorization/rbac/rbac-authorizer.js';
import { uncoveredRules } from './escalation.js';

const AUTO_UPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

const sameSubject = (a: Subject, b: Subject): boolean => a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');

/** Only the lists a rule sets, as a stored rule reads. */
function asRule(r: PolicyRule): NonNullable<Role['rules']>[number] {
  const out: NonNullable<Role['rules']>[number] = { verbs: r.verbs };
  if (r.apiGroups.length > 0) out.apiGroups = r.apiGroups;
  if (r.resources.length > 0) out.resources = r.resources;
  if (r.resourceNames.length > 0) out.resourceNames = r.resourceNames;
  if (r.nonResourceURLs.length > 0) out.nonResourceURLs = r.nonResourceURLs;
  return out;
}

/** A role gains the broken-down rules of its default that none of its rules covers. */
function reconcileRole(role: Role, wanted: Role): Role | undefined {
  // An aggregated role's rules are the aggregation controller's to keep.
  if (role.aggregationRule) return undefined;
  const missing = uncoveredRules(rulesOf(role), rulesOf(wanted));
  return missing.length === 0 ? undefined : { ...role, rules: [...(role.rules ?? []), ...missing.map(asRule)] };
}

/** A binding gains its default's subjects it lacks. */
function reconcileBinding(bound: RoleBinding, wanted: RoleBinding): RoleBinding | undefined {
  // Upstream recreates a binding whose role changed; a binding pointing elsewhere is left to its owner here.
  if (bound.roleRef?.kind !== wanted.roleRef?.kind || bound.roleRef?.name !== wanted.roleRef?.name) return undefined;
  const have = bound.subjects ?? [];
  const missing = (wanted.subjects ?? []).filter((s) => !have.some((h) => sameSubject(h, s)));
  return missing.length === 0 ? undefined : { ...bound, subjects: [...have, ...missing] };
}

/** The stored object `existing` reconciled with the default `wanted`, or undefined when it needs no write. */
export function reconcileDefault(existing: KObject, wanted: KObject): KObject | undefined {
  if (wanted.apiVersion !== `${RBAC_GROUP}/v1` || wanted.metadata?.annotations?.[AUTO_UPDATE] !== 'true') return undefined;
  if (existing.metadata?.annotations?.[AUTO_UPDATE] === 'false') return undefined;
  return wanted.kind === 'ClusterRole' || wanted.kind === 'Role' ? reconcileRole(existing as Role, wanted as Role) : reconcileBinding(existing as RoleBinding, wanted as RoleBinding);
}
