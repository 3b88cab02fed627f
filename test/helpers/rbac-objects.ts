/** RBAC objects for a test namespace, as a user or an admin would POST or PUT them. */
const G = 'rbac.authorization.k8s.io';

export function rbacObjects(ns: string): {
  role(name: string, rules: unknown[], kind?: string): Record<string, unknown>;
  binding(name: string, kind: string, roleName: string, user: string): Record<string, unknown>;
} {
  return {
    role: (name, rules, kind = 'Role') => ({ apiVersion: `${G}/v1`, kind, metadata: kind === 'Role' ? { name, namespace: ns } : { name }, rules }),
    // A RoleBinding in `ns` of the Role or ClusterRole `roleName` to the user `user`.
    binding: (name, kind, roleName, user) => ({
      apiVersion: `${G}/v1`,
      kind: 'RoleBinding',
      metadata: { name, namespace: ns },
      roleRef: { apiGroup: G, kind, name: roleName },
      subjects: [{ kind: 'User', apiGroup: G, name: user }],
    }),
  };
}
