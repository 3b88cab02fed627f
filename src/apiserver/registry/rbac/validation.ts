/** Validation of the four RBAC kinds (upstream pkg/apis/rbac/validation), with upstream texts. */
import type { Role, RoleBinding, Subject } from '../../../api/rbac.js';
import { type FieldError, invalid, notSupported, required } from '../../http/field-errors.js';
import { deepEqual } from '../../../lib/json-value.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

type Rule = NonNullable<Role['rules']>[number];

function policyRule(rule: Rule, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const len = (k: 'verbs' | 'apiGroups' | 'resources' | 'resourceNames' | 'nonResourceURLs'): number => (rule[k] ?? []).length;
  if (len('verbs') === 0) errs.push(required(`${path}.verbs`, 'verbs must contain at least one value'));
  if (len('nonResourceURLs') > 0) {
    if (namespaced) {
      errs.push(invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
    }
    if (len('apiGroups') > 0 || len('resources') > 0 || len('resourceNames') > 0) {
      errs.push(
        invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'),
      );
    }
    return errs;
  }
  if (len('apiGroups') === 0) errs.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (len('resources') === 0) errs.push(required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

/** Role (namespaced) or ClusterRole. */
export function validateRole(obj: Role, namespaced: boolean): FieldError[] {
  return (obj.rules ?? []).flatMap((r, i) => policyRule(r, namespaced, `rules[${i}]`));
}

function subject(s: Subject, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!s.name) errs.push(required(`${path}.name`));
  switch (s.kind) {
    case 'ServiceAccount':
      if (s.apiGroup) errs.push(notSupported(`${path}.apiGroup`, s.apiGroup, ['']));
      if (!namespaced && !s.namespace) errs.push(required(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== RBAC_GROUP) errs.push(notSupported(`${path}.apiGroup`, s.apiGroup ?? '', [RBAC_GROUP]));
      break;
    default:
      errs.push(notSupported(`${path}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

/** RoleBinding (may reference a Role or a ClusterRole) or ClusterRoleBinding (ClusterRole only). */
export function validateBinding(obj: RoleBinding, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = obj.roleRef ?? {};
  if (ref.apiGroup !== RBAC_GROUP) errs.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) errs.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(required('roleRef.name'));
  (obj.subjects ?? []).forEach((s, i) => errs.push(...subject(s, namespaced, `subjects[${i}]`)));
  return errs;
}

export function validateBindingUpdate(obj: RoleBinding, old: RoleBinding, namespaced: boolean): FieldError[] {
  const errs = validateBinding(obj, namespaced);
  if (!deepEqual(obj.roleRef, old.roleRef)) errs.push(invalid('roleRef', obj.roleRef, 'cannot change roleRef'));
  return errs;
}
