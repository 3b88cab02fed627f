/** rbac.authorization.k8s.io/v1 types shared by the authorizers, the RBAC registry and the reviews. */
import type { RbacV1Subject, V1AggregationRule, V1PolicyRule, V1RoleRef } from '@kubernetes/client-node';
import type { KObject } from './meta.js';
import type { Wire } from './wire.js';

/** A PolicyRule with every list present (absent lists read as empty). */
export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

/** A Role or ClusterRole as it travels as JSON (the served schema models every field). */
export interface Role extends KObject {
  rules?: Wire<V1PolicyRule>[];
  aggregationRule?: Wire<V1AggregationRule>;
}

export type RoleRef = Wire<V1RoleRef>;
export type Subject = Wire<RbacV1Subject>;

/** A RoleBinding or ClusterRoleBinding as it travels as JSON. */
export interface RoleBinding extends KObject {
  roleRef?: RoleRef;
  subjects?: Subject[];
}
