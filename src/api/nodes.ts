/**
 * How Kubernetes tells a kubelet's identity apart (pkg/auth/nodeidentifier upstream): user name
 * `system:node:<name>` and membership of `system:nodes`. Shared by the Node authorizer, the
 * NodeRestriction admission and the serving-certificate approver, so all three agree exactly.
 */
import type { V1NodeSpec, V1NodeStatus } from '@kubernetes/client-node';
import type { KObject } from './meta.js';
import type { Wire } from './wire.js';

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';
/** The namespace of the kubelets' heartbeat Leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/**
 * The node a requester speaks for: `{ isNode: false }` for anyone else; a node identity with an
 * empty name is still a node (and is refused by whoever asks), as upstream's identifier reports it.
 */
export function nodeIdentity(user: { username?: string; groups?: readonly string[] }): { isNode: false } | { isNode: true; nodeName: string } {
  const username = user.username ?? '';
  if (!username.startsWith(NODE_USER_PREFIX) || !(user.groups ?? []).includes(NODES_GROUP)) return { isNode: false };
  return { isNode: true, nodeName: username.slice(NODE_USER_PREFIX.length) };
}

/** One of a Node's status.addresses (core/v1 NodeAddress): InternalIP, ExternalIP, Hostname, InternalDNS, ExternalDNS. */
export interface NodeAddress {
  type: string;
  address: string;
}

/**
 * A core/v1 Node as it travels as JSON (the served schema models every field). Its addresses keep
 * type and address required: the serving approver reads them from Nodes its kubelets reported.
 */
export interface Node extends KObject {
  spec?: Wire<V1NodeSpec>;
  status?: Wire<Omit<V1NodeStatus, 'addresses'>> & { addresses?: NodeAddress[] };
}
