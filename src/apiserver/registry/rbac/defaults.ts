/**
 * rbac/v1 defaulting (k8s.io/kubernetes pkg/apis/rbac/v1/defaults.go), applied before validation as
 * the decoder does upstream: most manifests leave a User or Group subject's apiGroup out.
 */
import type { KObject } from '../../../api/meta.js';
import { isRecord } from '../../../lib/json.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/**
 * SetDefaults_Subject: User and Group subjects belong to the RBAC group; a ServiceAccount's stays
 * "" (core), which JSON omits.
 */
function defaultSubject(subject: Record<string, unknown>): void {
  if (subject.apiGroup !== undefined && subject.apiGroup !== '') return;
  if (subject.kind === 'User' || subject.kind === 'Group') subject.apiGroup = RBAC_GROUP;
}

/** SetDefaults_RoleBinding / SetDefaults_ClusterRoleBinding, then SetDefaults_Subject for each subject. */
export function setBindingDefaults(obj: KObject): void {
  if (isRecord(obj.roleRef) && (obj.roleRef.apiGroup === undefined || obj.roleRef.apiGroup === '')) obj.roleRef.apiGroup = RBAC_GROUP;
  if (Array.isArray(obj.subjects)) for (const s of obj.subjects) if (isRecord(s)) defaultSubject(s);
}
