/** rbac.authorization.k8s.io/v1 types shared by the authorizers, the RBAC registry and the reviews. */

/** A PolicyRule with every list present (absent lists read as empty). */
export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}
