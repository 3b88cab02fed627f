/**
 * Strategies of the four RBAC kinds: stored objects with validation, upstream's table columns
 * (`kubectl get roles|rolebindings`) and escalation prevention on every write
 * (rbac-escalation.ts). Their meaning lives in auth/rbac-authorizer.ts.
 */
import type { KObject } from '../../../api/meta.js';
import type { Role, RoleBinding } from '../../../api/rbac.js';
import { findResource, type ResourceInfo } from '../../../api/resources.js';
import { AGE_COLUMN, ageCell, column as col } from '../generic/table.js';
import { setBindingDefaults } from './defaults.js';
import { admitBinding, admitRole } from './escalation.js';
import { validateBinding, validateBindingUpdate, validateRole } from './validation.js';
import type { Strategy, TableConvertor } from '../generic/strategy.js';
import { validatePathSegmentName } from '../../validation/names.js';

function info(plural: string): ResourceInfo {
  const r = findResource('rbac.authorization.k8s.io', 'v1', plural);
  if (!r) throw new Error(`resource ${plural} missing from RESOURCES`);
  return r;
}

const NAME = col('Name', 'string', 'Name must be unique within a namespace.', 0, 'name');

const roleTable: TableConvertor = {
  columns: [NAME, col('Created At', 'date', 'Time when the object was created.')],
  cells: (obj) => [obj.metadata?.name ?? '', obj.metadata?.creationTimestamp ?? null],
};

interface SubjectLike {
  kind?: string;
  name?: string;
  namespace?: string;
}

function subjectsCell(obj: KObject, kind: string): string {
  const subjects = (Array.isArray(obj.subjects) ? obj.subjects : []) as SubjectLike[];
  return subjects
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name ?? ''}` : (s.name ?? '')))
    .join(', ');
}

const bindingTable: TableConvertor = {
  columns: [
    NAME,
    col('Role', 'string', 'RoleRef references the role being bound.'),
    AGE_COLUMN,
    col('Users', 'string', 'Users in the binding', 1),
    col('Groups', 'string', 'Groups in the binding', 1),
    col('ServiceAccounts', 'string', 'ServiceAccounts in the binding', 1),
  ],
  cells(obj, now) {
    const ref = (obj.roleRef ?? {}) as { kind?: string; name?: string };
    return [
      obj.metadata?.name ?? '',
      `${ref.kind ?? ''}/${ref.name ?? ''}`,
      ageCell(obj.metadata?.creationTimestamp, now),
      subjectsCell(obj, 'User'),
      subjectsCell(obj, 'Group'),
      subjectsCell(obj, 'ServiceAccount'),
    ];
  },
};

function roleStrategy(plural: string, namespaced: boolean): Strategy<Role> {
  const ri = info(plural);
  return {
    info: ri,
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
    // RBAC names are path segments (ValidateRBACName), so `system:` names are valid.
    validateName: validatePathSegmentName,
    validate: (obj) => validateRole(obj, namespaced),
    validateUpdate: (obj) => validateRole(obj, namespaced),
    admit: (obj, old, ctx) => admitRole(ri, obj, old, ctx),
    table: roleTable,
  };
}

function bindingStrategy(plural: string, namespaced: boolean): Strategy<RoleBinding> {
  const bi = info(plural);
  return {
    info: bi,
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
    validateName: validatePathSegmentName,
    // Defaulting runs before validation, as the decoder's does upstream.
    prepareForCreate: (obj) => setBindingDefaults(obj),
    prepareForUpdate: (obj) => setBindingDefaults(obj),
    validate: (obj) => validateBinding(obj, namespaced),
    validateUpdate: (obj, old) => validateBindingUpdate(obj, old, namespaced),
    admit: (obj, old, ctx) => admitBinding(bi, obj, old, ctx),
    table: bindingTable,
  };
}

/** Strategies for roles, clusterroles, rolebindings and clusterrolebindings. */
export function rbacStrategies(): Strategy[] {
  return [
    roleStrategy('roles', true),
    roleStrategy('clusterroles', false),
    bindingStrategy('rolebindings', true),
    bindingStrategy('clusterrolebindings', false),
  ];
}
