/** The ResourceInfos of the kinds access control reads through an ObjectReader. */
import type { Node } from '../../api/nodes.js';
import type { Pod } from '../../api/pods.js';
import type { Role, RoleBinding } from '../../api/rbac.js';
import type { Secret } from '../../api/secrets.js';
import { findResource, type ResourceInfo, type ResourceOf } from '../../api/resources.js';

function info(group: string, plural: string): ResourceInfo {
  const r = findResource(group, 'v1', plural);
  if (!r) throw new Error(`resource ${plural} missing from RESOURCES`);
  return r;
}

export const SERVICE_ACCOUNTS = info('', 'serviceaccounts');
export const SECRETS: ResourceOf<Secret> = info('', 'secrets');
export const PODS: ResourceOf<Pod> = info('', 'pods');
export const NODES: ResourceOf<Node> = info('', 'nodes');
export const ROLES: ResourceOf<Role> = info('rbac.authorization.k8s.io', 'roles');
export const CLUSTER_ROLES: ResourceOf<Role> = info('rbac.authorization.k8s.io', 'clusterroles');
export const ROLE_BINDINGS: ResourceOf<RoleBinding> = info('rbac.authorization.k8s.io', 'rolebindings');
export const CLUSTER_ROLE_BINDINGS: ResourceOf<RoleBinding> = info('rbac.authorization.k8s.io', 'clusterrolebindings');
