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
 * as upstream's ByUser distinguisher: flow control takes it from the user when a request queues.
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

/** Where a request runs; one shared frozen object per (level, schema). */
export interface Classification {
  readonly priorityLevel: PriorityLevelName;
  readonly flowSchema: string;
}

/** classify() runs on every request and allocates nothing: it returns one of these. */
const classOf = (priorityLevel: PriorityLevelName, flowSchema: string): Classification => Object.freeze({ priorityLevel, flowSchema });

const EXEMPT = classOf('exempt', 'exempt');
const LEADER_ELECTION = classOf('leader-election', 'system-leader-election');
const NODE_HIGH = classOf('node-high', 'system-node-high');
const SYSTEM_NODES = classOf('workload', 'system-nodes');
const CATCH_ALL = classOf('workload', 'catch-all');
const GLOBAL_DEFAULT = classOf('workload', 'global-default');

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
  ['system:kube-controller-manager', classOf('workload-high', 'kube-controller-manager')],
  ['system:kube-scheduler', classOf('workload-high', 'kube-scheduler')],
  [KUBE_IDENTITY_CONTROLLER_USER, classOf('workload-high', 'kube-identity-controller')],
]);
const KUBE_SYSTEM_SERVICE_ACCOUNT = `${SERVICE_ACCOUNT_USERNAME_PREFIX}kube-system:`;
const KUBE_SYSTEM_SERVICE_ACCOUNTS = classOf('workload-high', 'kube-system-service-accounts');

/** The workload-high flow schema a user's requests match, if any. */
function workloadHigh(user: UserInfo): Classification | undefined {
  return WORKLOAD_HIGH_USERS.get(user.username) ?? (user.username.startsWith(KUBE_SYSTEM_SERVICE_ACCOUNT) ? KUBE_SYSTEM_SERVICE_ACCOUNTS : undefined);
}

/** A node's heartbeat path: its Node (and status) and its Lease; its CSRs, pods and watches are not. */
function isNodeHigh(info: RequestInfo): boolean {
  if (!NODE_HIGH_RESOURCES.has(`${info.apiGroup}/${info.resource}`)) return false;
  return info.subresource === undefined || (info.resource === 'nodes' && info.subresource === 'status');
}

export function classify(user: UserInfo, info: RequestInfo): Classification {
  if (user.groups.includes(MASTERS_GROUP)) return EXEMPT;
  const resource = info.isResourceRequest;
  if (resource && isLeaderElection(user, info)) return LEADER_ELECTION;
  const node = user.groups.includes(NODES_GROUP);
  if (node && resource && isNodeHigh(info)) return NODE_HIGH;
  if (node) return SYSTEM_NODES;
  const high = workloadHigh(user);
  if (high) return high;
  if (user.groups.includes(ALL_UNAUTHENTICATED)) return CATCH_ALL;
  return GLOBAL_DEFAULT;
}
