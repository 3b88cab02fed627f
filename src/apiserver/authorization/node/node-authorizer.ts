/**
 * The Node authorizer (kube-apiserver's `--authorization-mode=Node`, chained before RBAC): what a
 * kubelet authenticated as `system:node:NAME` in `system:nodes` may do, for the kinds this server
 * serves. Secrets, ConfigMaps and service-account tokens only through pods bound to the node; its
 * own Node by name (every node may create, update and patch Nodes: NodeRestriction then limits
 * that to its own); Leases only its own in kube-node-lease; pods by binding or a
 * `spec.nodeName=NAME` field selector (PodCertificateRequests too, which it may also create); the
 * rest by upstream's static node rules (CSRs, Events, reviews). What is reached through pods is
 * asked of the node graph (node-graph.ts), so a kubelet's Secret GET costs no store read. It never
 * denies outright: without an allow the next authorizer (RBAC) is asked, and the reason given here
 * is what the 403 says, in upstream's words.
 */
import { NODE_LEASE_NAMESPACE, nodeIdentity } from '../../../api/nodes.js';
import { promised, then, type MaybePromise } from '../../../lib/maybe-promise.js';
import type { AuthorizationAttributes, Authorizer, Decision } from '../authorizer.js';
import type { ObjectReader } from '../../authentication/types.js';
import { storeRelations, type NodeGraph, type RelatedKind } from './node-graph.js';
import { ruleAllows } from '../rbac/rbac-authorizer.js';
import { NODE_RULES } from '../rbac/default-policy.js';

const READ = ['get', 'list', 'watch'];

/** Pod writes a node may attempt (NodeRestriction narrows them to its own pods), by subresource. */
const POD_WRITES: Record<string, string[] | undefined> = { '': ['create', 'delete'], status: ['update', 'patch'], eviction: ['create'] };

const allow: Decision = { allowed: true };
const noOpinion = (reason = ''): Decision => ({ allowed: false, reason });
const noRelationship = (nodeName: string): Decision => noOpinion(`no relationship found between node '${nodeName}' and this object`);

export interface NodeAuthorizerOptions {
  objects: ObjectReader;
  /** Relationships from memory once synced (the caller owns it and stops it); without it every question reads `objects`. */
  graph?: NodeGraph;
}

export function createNodeAuthorizer(o: NodeAuthorizerOptions): Authorizer {
  const fromStore = storeRelations(o.objects);
  /**
   * The graph answers once synced. Where it may trail the store (etcd: a pod bound through another
   * replica reaches this one's watch a round trip later) what it would deny is read from the store,
   * so a pod bound before the request is never refused for want of its watch event; what it allows
   * stands, as upstream's informer-fed graph lets a deleted pod's node in until the event arrives.
   * What the graph answers alone is answered at once.
   */
  const isRelated = (nodeName: string, kind: RelatedKind, namespace: string, name: string): MaybePromise<boolean> => {
    const graph = o.graph;
    if (!graph?.ready()) return fromStore.related(nodeName, kind, namespace, name);
    if (graph.related(nodeName, kind, namespace, name)) return true;
    return !graph.current() && fromStore.related(nodeName, kind, namespace, name);
  };

  const related = (nodeName: string, kind: RelatedKind, a: AuthorizationAttributes): MaybePromise<Decision> => {
    if (!a.name) return noOpinion('No Object name found');
    return then(isRelated(nodeName, kind, a.namespace ?? '', a.name), (yes) => (yes ? allow : noRelationship(nodeName)));
  };

  /** Secrets and ConfigMaps: read one object a pod on this node uses. */
  const readNamespaced = (nodeName: string, kind: RelatedKind, a: AuthorizationAttributes): MaybePromise<Decision> => {
    if (!READ.includes(a.verb)) return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return related(nodeName, kind, a);
  };

  const createToken = (nodeName: string, a: AuthorizationAttributes): MaybePromise<Decision> => {
    if (a.verb !== 'create' || !a.name) return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    return related(nodeName, 'serviceaccounts', a);
  };

  /** Pods (AuthorizeNodeWithSelectors): its own by binding, lists pinned to it by field selector. */
  const pod = (nodeName: string, a: AuthorizationAttributes): MaybePromise<Decision> => {
    const sub = a.subresource ?? '';
    if (sub === '' && a.verb === 'get') return related(nodeName, 'pods', a);
    if (sub === '' && (a.verb === 'list' || a.verb === 'watch')) {
      if (selectsNode(a.fieldSelector, nodeName)) return allow;
      return a.name ? related(nodeName, 'pods', a) : noOpinion('can only list/watch pods with spec.nodeName field selector');
    }
    return POD_WRITES[sub]?.includes(a.verb) ? allow : noOpinion();
  };

  /**
   * PodCertificateRequests: create (NodeRestriction then checks the pod is its own), list and watch
   * pinned to it by a spec.nodeName field selector (the kubelet's informer), get of one naming it.
   */
  const podCertificateRequest = (nodeName: string, a: AuthorizationAttributes): MaybePromise<Decision> => {
    if (a.subresource) return noOpinion('can only create podcertificaterequests, and read its own');
    if (a.verb === 'create') return allow;
    if ((a.verb === 'list' || a.verb === 'watch') && selectsNode(a.fieldSelector, nodeName)) return allow;
    if (a.verb === 'get' && a.name) return related(nodeName, 'podcertificaterequests', a);
    return noOpinion(`can only create podcertificaterequests, or get/list/watch those with spec.nodeName=${nodeName}`);
  };

  /** The kinds whose access is subdivided per node; the rest follow NODE_RULES. */
  const subdivided: Record<string, ((nodeName: string, a: AuthorizationAttributes) => MaybePromise<Decision>) | undefined> = {
    'secrets.': (n, a) => readNamespaced(n, 'secrets', a),
    'configmaps.': (n, a) => readNamespaced(n, 'configmaps', a),
    'serviceaccounts.': createToken,
    'leases.coordination.k8s.io': authorizeLease,
    'nodes.': authorizeNode,
    'pods.': pod,
    'podcertificaterequests.certificates.k8s.io': podCertificateRequest,
  };

  const authorizeNow = (a: AuthorizationAttributes): MaybePromise<Decision> => {
    const id = nodeIdentity(a.user);
    if (!id.isNode) return noOpinion();
    const { nodeName } = id;
    if (nodeName === '') return noOpinion(`unknown node for user "${a.user.username}"`);
    const special = a.resource === undefined ? undefined : subdivided[`${a.resource}.${a.apiGroup ?? ''}`];
    if (special) return special(nodeName, a);
    return NODE_RULES.some((r) => ruleAllows(a, r)) ? allow : noOpinion();
  };

  return {
    authorize: (a) => promised(() => authorizeNow(a)),
    authorizeNow,
    // Upstream's answer: a node's permissions depend on the objects bound to it, so they are not listed.
    rulesFor: (user) =>
      Promise.resolve(
        nodeIdentity(user).isNode
          ? { rules: [], incomplete: true, errors: ['node authorizer does not support user rule resolution'] }
          : { rules: [], incomplete: false, errors: [] },
      ),
  };
}

function authorizeLease(nodeName: string, a: AuthorizationAttributes): Decision {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) {
    return noOpinion('can only get, create, update, patch, or delete a node lease');
  }
  if (a.namespace !== NODE_LEASE_NAMESPACE) return noOpinion(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
  // On create the name is in the body: NodeRestriction checks it there.
  if (a.verb !== 'create' && a.name !== nodeName) return noOpinion('can only access node lease with the same name as the requesting node');
  return allow;
}

/** Upstream with AuthorizeNodeWithSelectors (on by default since 1.32): reads of its own Node only. */
function authorizeNode(nodeName: string, a: AuthorizationAttributes): Decision {
  const sub = a.subresource ?? '';
  if (sub === '' && ['create', 'update', 'patch'].includes(a.verb)) return allow;
  if (sub === '' && READ.includes(a.verb)) {
    if (a.name === nodeName) return allow;
    if (!a.name) return noOpinion(`node '${nodeName}' cannot read all nodes, only its own Node object`);
    return noOpinion(`node '${nodeName}' cannot read '${a.name}', only its own Node object`);
  }
  if (sub === 'status' && (a.verb === 'update' || a.verb === 'patch')) return allow;
  return noOpinion();
}

/** Whether a field selector pins `spec.nodeName` to this node (`=` or `==`). */
function selectsNode(selector: string | undefined, nodeName: string): boolean {
  return (selector ?? '').split(',').some((part) => {
    const m = /^\s*spec\.nodeName\s*==?\s*(.*?)\s*$/.exec(part);
    return m !== null && m[1] === nodeName;
  });
}
