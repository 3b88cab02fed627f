/**
 * The Node authorizer and NodeRestriction admission through the real server (`Node,RBAC` chain):
 * a kubelet identity (system:node:NAME in system:nodes) against each kind we serve, per verb and
 * object, allowed and refused, with upstream's wording in every refusal.
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TOKENS = [
  'node-a-token,system:node:node-a,uid-a,"system:nodes,system:authenticated"',
  'node-b-token,system:node:node-b,uid-b,"system:nodes,system:authenticated"',
  // The user name alone is not a node identity: without the group the Node authorizer has no opinion.
  'fake-node-token,system:node:node-a,uid-f,"system:authenticated"',
].join('\n');

let server: TestServer;
const patchType = (method: string): string | undefined => (method === 'PATCH' ? 'application/merge-patch+json' : undefined);
const as = (token: string) => (method: string, path: string, body?: unknown): Promise<RawResponse> =>
  raw(server, method, path, { token, body, contentType: patchType(method) });
const nodeA = as('node-a-token');
const admin = (method: string, path: string, body?: unknown): Promise<RawResponse> => raw(server, method, path, { body, contentType: patchType(method) });

const TOKEN_PATH = '/api/v1/namespaces/default/serviceaccounts/default/token';
const tokenRequest = (pod: string, uid: string): unknown => ({
  apiVersion: 'authentication.k8s.io/v1',
  kind: 'TokenRequest',
  spec: { audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod, uid } },
});
const podUid = async (name: string): Promise<string> => String((await admin('GET', `/api/v1/namespaces/default/pods/${name}`)).json?.metadata?.uid);

const nodeBody = (name: string, extra: Record<string, unknown> = {}): unknown => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, ...extra } });
const lease = (name: string, namespace = 'kube-node-lease'): unknown => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace },
  spec: { holderIdentity: name, leaseDurationSeconds: 40 },
});

beforeAll(async () => {
  server = await startTestServer({ tokenFile: `${TOKENS}\n` });
  const ok = async (p: Promise<RawResponse>): Promise<void> => {
    const r = await p;
    if (r.status >= 300) throw new Error(`setup failed: ${r.status} ${r.text}`);
  };
  await ok(admin('POST', '/api/v1/nodes', nodeBody('node-b')));
  for (const name of ['on-a', 'on-b']) {
    await ok(admin('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: `secret-${name}` }, stringData: { k: 'v' } }));
    await ok(admin('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `cm-${name}` }, data: { k: 'v' } }));
  }
  for (const [pod, node] of [['pod-a', 'node-a'], ['pod-b', 'node-b']] as const) {
    const suffix = node === 'node-a' ? 'on-a' : 'on-b';
    await ok(
      admin('POST', '/api/v1/namespaces/default/pods', {
        metadata: { name: pod },
        spec: {
          nodeName: node,
          // The API token volume, as kube-api-access: what a node may ask a token for.
          volumes: [{ name: 's', secret: { secretName: `secret-${suffix}` } }, { name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }],
          containers: [{ name: 'c', image: 'x', envFrom: [{ configMapRef: { name: `cm-${suffix}` } }] }],
        },
      }),
    );
  }
}, 60_000);

afterAll(async () => server?.close());

interface Case {
  what: string;
  call: () => Promise<RawResponse>;
  status: number;
  message?: string;
}

const forbidden = (what: string, verb: string, resource: string, where: string, reason: string): string =>
  `${what} is forbidden: User "system:node:node-a" cannot ${verb} resource "${resource}" in API group "" ${where}: ${reason}`;

describe('Node authorizer, in order (each case may depend on the ones before)', () => {
  const cases: Case[] = [
    // Nodes: read only its own; create/update its own (NodeRestriction), never another's.
    { what: 'get own Node before it exists', call: () => nodeA('GET', '/api/v1/nodes/node-a'), status: 404 },
    { what: 'create own Node', call: () => nodeA('POST', '/api/v1/nodes', nodeBody('node-a', { labels: { 'kubernetes.io/hostname': 'node-a' } })), status: 201 },
    {
      what: 'create another Node',
      call: () => nodeA('POST', '/api/v1/nodes', nodeBody('node-c')),
      status: 403,
      message: 'nodes "node-c" is forbidden: node "node-a" is not allowed to modify node "node-c"',
    },
    {
      what: 'create own Node with a role label',
      call: () => as('node-b-token')('POST', '/api/v1/nodes', nodeBody('node-b', { labels: { 'node-role.kubernetes.io/worker': '', 'kubernetes.io/os': 'linux' } })),
      status: 403,
      message: 'nodes "node-b" is forbidden: node "node-b" is not allowed to set the following labels: node-role.kubernetes.io/worker',
    },
    { what: 'get own Node', call: () => nodeA('GET', '/api/v1/nodes/node-a'), status: 200 },
    {
      what: 'get another Node',
      call: () => nodeA('GET', '/api/v1/nodes/node-b'),
      status: 403,
      message: forbidden('nodes "node-b"', 'get', 'nodes', 'at the cluster scope', "node 'node-a' cannot read 'node-b', only its own Node object"),
    },
    {
      what: 'list all Nodes',
      call: () => nodeA('GET', '/api/v1/nodes'),
      status: 403,
      message: forbidden('nodes', 'list', 'nodes', 'at the cluster scope', "node 'node-a' cannot read all nodes, only its own Node object"),
    },
    { what: 'watch own Node by field selector', call: () => nodeA('GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a&limit=1'), status: 200 },
    { what: 'update own Node status', call: () => nodeA('PATCH', '/api/v1/nodes/node-a/status', { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } }), status: 200 },
    {
      what: 'update another Node status',
      call: () => nodeA('PATCH', '/api/v1/nodes/node-b/status', { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } }),
      status: 403,
      message: 'nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"',
    },
    { what: 'label own Node with a kubelet label', call: () => nodeA('PATCH', '/api/v1/nodes/node-a', { metadata: { labels: { 'node.kubernetes.io/instance-type': 'm' } } }), status: 200 },
    {
      what: 'label own Node as control plane',
      call: () => nodeA('PATCH', '/api/v1/nodes/node-a', { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }),
      status: 403,
      message: 'nodes "node-a" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane',
    },
    {
      what: 'taint own Node',
      call: () => nodeA('PATCH', '/api/v1/nodes/node-a', { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }),
      status: 403,
      message: 'nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints',
    },
    {
      what: 'own Node ownerReferences (CVE-2025-5187)',
      call: () => nodeA('PATCH', '/api/v1/nodes/node-a', { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-b', uid: 'x' }] } }),
      status: 403,
      message: 'nodes "node-a" is forbidden: node "node-a" is not allowed to modify ownerReferences',
    },
    {
      what: 'delete own Node',
      call: () => nodeA('DELETE', '/api/v1/nodes/node-a'),
      status: 403,
      message: forbidden('nodes "node-a"', 'delete', 'nodes', 'at the cluster scope', ''),
    },
    // Leases: only its own, only in kube-node-lease.
    { what: 'create own Lease', call: () => nodeA('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-a')), status: 201 },
    { what: 'renew own Lease', call: () => nodeA('PATCH', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a', { spec: { renewTime: '2026-01-01T00:00:00.000000Z' } }), status: 200 },
    {
      what: 'create another node\'s Lease',
      call: () => nodeA('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-b')),
      status: 403,
      message: 'leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node',
    },
    {
      what: 'get another node\'s Lease',
      call: () => nodeA('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-b'),
      status: 403,
      message: 'leases.coordination.k8s.io "node-b" is forbidden: User "system:node:node-a" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node lease with the same name as the requesting node',
    },
    {
      what: 'a Lease outside kube-node-lease',
      call: () => nodeA('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/node-a'),
      status: 403,
      message: 'leases.coordination.k8s.io "node-a" is forbidden: User "system:node:node-a" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-system": can only access leases in the "kube-node-lease" system namespace',
    },
    {
      what: 'list Leases',
      call: () => nodeA('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases'),
      status: 403,
      message: 'leases.coordination.k8s.io is forbidden: User "system:node:node-a" cannot list resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only get, create, update, patch, or delete a node lease',
    },
    // Secrets and ConfigMaps: only those its pods use.
    { what: 'get a Secret a pod on the node uses', call: () => nodeA('GET', '/api/v1/namespaces/default/secrets/secret-on-a'), status: 200 },
    {
      what: 'get another node\'s Secret',
      call: () => nodeA('GET', '/api/v1/namespaces/default/secrets/secret-on-b'),
      status: 403,
      message: forbidden('secrets "secret-on-b"', 'get', 'secrets', 'in the namespace "default"', "no relationship found between node 'node-a' and this object"),
    },
    {
      what: 'list Secrets',
      call: () => nodeA('GET', '/api/v1/namespaces/default/secrets'),
      status: 403,
      message: forbidden('secrets', 'list', 'secrets', 'in the namespace "default"', 'No Object name found'),
    },
    {
      what: 'update a Secret its pod uses',
      call: () => nodeA('PATCH', '/api/v1/namespaces/default/secrets/secret-on-a', { stringData: { k: 'w' } }),
      status: 403,
      message: forbidden('secrets "secret-on-a"', 'patch', 'secrets', 'in the namespace "default"', 'can only read resources of this type'),
    },
    { what: 'get a ConfigMap its pod uses', call: () => nodeA('GET', '/api/v1/namespaces/default/configmaps/cm-on-a'), status: 200 },
    {
      what: 'get another node\'s ConfigMap',
      call: () => nodeA('GET', '/api/v1/namespaces/default/configmaps/cm-on-b'),
      status: 403,
      message: forbidden('configmaps "cm-on-b"', 'get', 'configmaps', 'in the namespace "default"', "no relationship found between node 'node-a' and this object"),
    },
    // Pods: its own, or lists pinned to it.
    { what: 'get a pod bound to it', call: () => nodeA('GET', '/api/v1/namespaces/default/pods/pod-a'), status: 200 },
    {
      what: 'get a pod bound elsewhere',
      call: () => nodeA('GET', '/api/v1/namespaces/default/pods/pod-b'),
      status: 403,
      message: forbidden('pods "pod-b"', 'get', 'pods', 'in the namespace "default"', "no relationship found between node 'node-a' and this object"),
    },
    { what: 'list pods with spec.nodeName=itself', call: () => nodeA('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a'), status: 200 },
    {
      what: 'list every pod',
      call: () => nodeA('GET', '/api/v1/pods'),
      status: 403,
      message: 'pods is forbidden: User "system:node:node-a" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector',
    },
    { what: 'update status of its pod', call: () => nodeA('PATCH', '/api/v1/namespaces/default/pods/pod-a/status', { status: { phase: 'Running' } }), status: 200 },
    {
      what: 'update status of another node\'s pod',
      call: () => nodeA('PATCH', '/api/v1/namespaces/default/pods/pod-b/status', { status: { phase: 'Running' } }),
      status: 403,
      message: 'pods "pod-b" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself',
    },
    {
      what: 'create a pod that is not a mirror pod',
      call: () => nodeA('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] } }),
      status: 403,
      message: 'pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node-a" can only create mirror pods',
    },
    {
      what: 'delete another node\'s pod',
      call: () => nodeA('DELETE', '/api/v1/namespaces/default/pods/pod-b'),
      status: 403,
      message: 'pods "pod-b" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself',
    },
    // Service-account tokens: only for the accounts of its pods, bound to one of its pods by uid.
    { what: 'a token for its pod\'s account, bound to that pod', call: async () => nodeA('POST', TOKEN_PATH, tokenRequest('pod-a', await podUid('pod-a'))), status: 201 },
    {
      what: 'a token not bound to a pod',
      call: () => nodeA('POST', TOKEN_PATH, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [] } }),
      status: 403,
      message: 'serviceaccounts "default" is forbidden: node requested token not bound to a pod',
    },
    {
      what: 'a token bound to another node\'s pod',
      call: async () => nodeA('POST', TOKEN_PATH, tokenRequest('pod-b', await podUid('pod-b'))),
      status: 403,
      message: 'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
    },
    {
      what: 'a token bound to a pod by a stale uid',
      call: () => nodeA('POST', TOKEN_PATH, tokenRequest('pod-a', 'not-the-uid')),
      status: 403,
      message: 'serviceaccounts "default" is forbidden: the UID in the bound object reference (not-the-uid) does not match the UID in record. The object might have been deleted and then recreated',
    },
    {
      what: 'a token for an account no pod of its uses',
      call: async () => nodeA('POST', '/api/v1/namespaces/kube-system/serviceaccounts/default/token', tokenRequest('pod-a', await podUid('pod-a'))),
      status: 403,
      message: forbidden('serviceaccounts "default"', 'create', 'serviceaccounts/token', 'in the namespace "kube-system"', "no relationship found between node 'node-a' and this object"),
    },
    // CSRs, Events, reviews: the static node rules.
    { what: 'list CSRs', call: () => nodeA('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests'), status: 200 },
    {
      what: 'approve a CSR',
      call: () => nodeA('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/x/approval', { metadata: { name: 'x' } }),
      status: 403,
      message: 'certificatesigningrequests.certificates.k8s.io "x" is forbidden: User "system:node:node-a" cannot update resource "certificatesigningrequests/approval" in API group "certificates.k8s.io" at the cluster scope',
    },
    {
      what: 'create an Event',
      call: () => nodeA('POST', '/api/v1/namespaces/default/events', { metadata: { name: 'e1' }, involvedObject: { kind: 'Node', name: 'node-a' }, reason: 'Starting', message: 'm' }),
      status: 201,
    },
    {
      what: 'delete an Event',
      call: () => nodeA('DELETE', '/api/v1/namespaces/default/events/e1'),
      status: 403,
      message: forbidden('events "e1"', 'delete', 'events', 'in the namespace "default"', ''),
    },
    {
      what: 'read a ServiceAccount',
      call: () => nodeA('GET', '/api/v1/namespaces/default/serviceaccounts/default'),
      status: 403,
      message: forbidden('serviceaccounts "default"', 'get', 'serviceaccounts', 'in the namespace "default"', 'can only create tokens for individual service accounts'),
    },
    // Not a node without the group: RBAC alone decides, and grants nothing here.
    {
      what: 'system:node: user name without system:nodes',
      call: () => as('fake-node-token')('GET', '/api/v1/nodes/node-a'),
      status: 403,
      message: forbidden('nodes "node-a"', 'get', 'nodes', 'at the cluster scope', ''),
    },
  ];

  it.each(cases.map((c) => [c.what, c] as const))('%s', async (_what, c) => {
    const res = await c.call();
    if (c.message === undefined) expect({ status: res.status, text: res.status === c.status ? '' : res.text }).toEqual({ status: c.status, text: '' });
    else expect({ status: res.status, message: res.json?.message as unknown }).toEqual({ status: c.status, message: c.message.replace(/: $/, '') });
  });
});

it('publishes the node rules as the unbound system:node ClusterRole, as upstream does', async () => {
  const role = await admin('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:node');
  expect(role.json.rules).toContainEqual({ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] });
  const binding = await admin('GET', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:node');
  expect(binding.status).toBe(200);
  expect(binding.json.subjects).toBeUndefined();
});
