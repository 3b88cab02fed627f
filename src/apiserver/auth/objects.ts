/** Lookups of the core objects the identity layer consults, through the request's ObjectReader. */
import type { KObject } from '../../api/meta.js';
import { findResource, type ResourceInfo } from '../../api/resources.js';

function info(group: string, plural: string): ResourceInfo {
  const r = findResource(group, 'v1', plural);
  if (!r) throw new Error(`resource ${plural} missing from RESOURCES`);
  return r;
}

export const SERVICE_ACCOUNTS = info('', 'serviceaccounts');
export const SECRETS = info('', 'secrets');
export const PODS = info('', 'pods');
export const NODES = info('', 'nodes');
export const ROLES = info('rbac.authorization.k8s.io', 'roles');
export const CLUSTER_ROLES = info('rbac.authorization.k8s.io', 'clusterroles');
export const ROLE_BINDINGS = info('rbac.authorization.k8s.io', 'rolebindings');
export const CLUSTER_ROLE_BINDINGS = info('rbac.authorization.k8s.io', 'clusterrolebindings');

/** Whether `obj` has been deleting for longer than `graceMs` (bound-token liveness uses 60 s). */
export function deletedBefore(obj: KObject, now: Date, graceMs: number): boolean {
  const ts = obj.metadata?.deletionTimestamp;
  return ts !== undefined && Date.parse(ts) < now.getTime() - graceMs;
}

/** A string field or undefined, for reading untyped objects without casts everywhere. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export { record } from '../../lib/json.js';

export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
