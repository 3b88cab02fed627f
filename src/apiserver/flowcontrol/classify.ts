/**
 * Which priority level a request runs at, in the spirit of API Priority and Fairness' suggested
 * configuration (kube-apiserver's bootstrap FlowSchemas), cut down to the four levels an identity
 * server needs:
 * - exempt: system:masters (upstream's `exempt` schema); health checks never reach flow control;
 * - leader-election: get/create/update of Leases, ConfigMaps and Endpoints by the controller
 *   managers' users and by service accounts (upstream's `system-leader-election`, which names only
 *   kube-system's; ours also admits a controller installed in its own namespace);
 * - node-high: a node's own Node, Node status and Lease requests (`system-node-high`), so heartbeats
 *   get through a storm of CSRs or lists;
 * - workload-high: the controller managers' other requests (`kube-controller-manager`,
 *   `kube-scheduler`, and kube-identity's own controller under `up`) and kube-system's service
 *   accounts (`kube-system-service-accounts`), so the approvals and certificates a storm of CSRs
 *   waits for are not queued behind it;
 * - workload: everything else, nodes' other requests (`system-nodes`), authenticated users
 *   (`global-default`) and anonymous ones (`catch-all`).
 * The flow (whose requests are queued together and served in turn with other flows') is the user,
 * as upstream's ByUser distinguisher.
 */
import type { UserInfo } from '../../api/meta.js';
import { NODES_GROUP } from '../../api/nodes.js';
import { KUBE_IDENTITY_CONTROLLER_USER } from '../authorization/rbac/default-policy.js';
import { MASTERS_GROUP } from '../authorization/rbac/rbac-authorizer.js';
import { ALL_UNAUTHENTICATED } from '../authentication/request-authenticator.js';
import { SERVICE_ACCOUNT_USERNAME_PREFIX } from '../authentication/sa-token.js';
import type { RequestInfo } from '../http/request-info.js';

export const PRIORITY_LEVELS = ['exempt', 'leader-election', 'node-high', 'workload-high', 'workload'] as const;
export type PriorityLevelName = (typeof PRIORITY_LEVELS)[number];

export interface Classification {
  priorityLevel: PriorityLevelName;
  flowSchema: string;
  /** Requests of one flow share a queue; flows take turns. */
  flow: string;
}

/** Upstream's controller managers, and kube-identity's own controller as `up` runs it (its identity is theirs in kind). */
const LEADER_ELECTION_USERS = new Set(['system:kube-controller-manager', 'system:kube-scheduler', KUBE_IDENTITY_CONTROLLER_USER]);
const LEADER_ELECTION_VERBS = new Set(['get', 'create', 'update']);
/** group/resource of the objects leader election locks on. */
const LEADER_ELECTION_RESOURCES = new Set(['coordination.k8s.io/leases', '/configmaps', '/endpoints']);
const NODE_HIGH_RESOURCES = new Set(['/nodes', 'coordination.k8s.io/leases']);

function isLeaderElection(user: UserInfo, info: RequestInfo): boolean {
  if (!LEADER_ELECTION_USERS.has(user.username) && !user.username.startsWith(SERVICE_ACCOUNT_USERNAME_PREFIX)) return false;
  if (!LEADER_ELECTION_VERBS.has(info.verb)) return false;
  return info.subresource === undefined && LEADER_ELECTION_RESOURCES.has(`${info.apiGroup}/${info.resource}`);
}

/** Upstream's flow schemas at workload-high, by user; kube-identity's controller as kube-controller-manager. */
const WORKLOAD_HIGH_USERS = new Map([
  ['system:kube-controller-manager', 'kube-controller-manager'],
  ['system:kube-scheduler', 'kube-scheduler'],
  [KUBE_IDENTITY_CONTROLLER_USER, 'kube-identity-controller'],
]);
const KUBE_SYSTEM_SERVICE_ACCOUNT = `${SERVICE_ACCOUNT_USERNAME_PREFIX}kube-system:`;

/** The workload-high flow schema a user's requests match, if any. */
function workloadHigh(user: UserInfo): string | undefined {
  return WORKLOAD_HIGH_USERS.get(user.username) ?? (user.username.startsWith(KUBE_SYSTEM_SERVICE_ACCOUNT) ? 'kube-system-service-accounts' : undefined);
}

/** A node's heartbeat path: its Node (and status) and its Lease; its CSRs, pods and watches are not. */
function isNodeHigh(info: RequestInfo): boolean {
  if (!NODE_HIGH_RESOURCES.has(`${info.apiGroup}/${info.resource}`)) return false;
  return info.subresource === undefined || (info.resource === 'nodes' && info.subresource === 'status');
}

export function classify(user: UserInfo, info: RequestInfo): Classification {
  const flow = user.username;
  if (user.groups.includes(MASTERS_GROUP)) return { priorityLevel: 'exempt', flowSchema: 'exempt', flow };
  const resource = info.isResourceRequest;
  if (resource && isLeaderElection(user, info)) return { priorityLevel: 'leader-election', flowSchema: 'system-leader-election', flow };
  const node = user.groups.includes(NODES_GROUP);
  if (node && resource && isNodeHigh(info)) return { priorityLevel: 'node-high', flowSchema: 'system-node-high', flow };
  if (node) return { priorityLevel: 'workload', flowSchema: 'system-nodes', flow };
  const high = workloadHigh(user);
  if (high) return { priorityLevel: 'workload-high', flowSchema: high, flow };
  if (user.groups.includes(ALL_UNAUTHENTICATED)) return { priorityLevel: 'workload', flowSchema: 'catch-all', flow };
  return { priorityLevel: 'workload', flowSchema: 'global-default', flow };
}
