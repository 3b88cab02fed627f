/**
 * Who may ask for a pod's certificate, through the real server (Node,RBAC authorizers and the
 * NodeRestriction admission plugin, which the full assembly enables): a kubelet only for pods bound
 * to it, naming their current pod, ServiceAccount and Node UIDs and a signer the pod mounts; it reads
 * only requests naming it. A namespace user cannot forge one, an anonymous client gets nothing.
 */
import { raw, rawAs, type Acting, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { pcrBody, pcrPath, podOnNode, testKey, type PodIdentity, type TestKey } from '../helpers/pod-certificates.js';

const NS = 'pcr-auth';
const SIGNER = 'example.com/workload';
let srv: TestServer;
let onA: PodIdentity;
let onB: PodIdentity;
let key: TestKey;
let n = 0;

type Who = Acting;
const nodeA: Who = { user: 'system:node:node-a', groups: ['system:nodes'] };
const nodeB: Who = { user: 'system:node:node-b', groups: ['system:nodes'] };

const as = (who: Who, method: string, path: string, body?: unknown): Promise<RawResponse> => rawAs(srv, who, method, path, body);

const create = async (who: Who, id: PodIdentity, spec: Record<string, unknown> = {}, signerName = SIGNER): Promise<RawResponse> =>
  as(who, 'POST', pcrPath('v1', NS), await pcrBody(id, key, { name: `req-${++n}`, signerName, spec }));

const refusal = (res: RawResponse): [number, string] => [res.status, String(res.json.message).replace(/^podcertificaterequests\.certificates\.k8s\.io "req-\d+" is forbidden: /, '')];

beforeAll(async () => {
  srv = await startTestServer();
  onA = await podOnNode(srv, NS, 'pod-a', 'node-a', [SIGNER]);
  onB = await podOnNode(srv, NS, 'pod-b', 'node-b', [SIGNER]);
  key = testKey('ECDSAP256');
}, 60_000);

afterAll(async () => {
  await srv.close();
});

describe('NodeRestriction', () => {
  it('lets a node ask for a pod bound to it', async () => {
    const res = await create(nodeA, onA);
    expect([res.status, res.json.spec.nodeName]).toEqual([201, 'node-a']);
  });

  it("refuses a node asking for another node's pod, in upstream's words", async () => {
    expect(refusal(await create(nodeB, onA))).toEqual([403, 'PodCertificateRequest.Spec.NodeName="node-a", which is not the requesting node "node-b"']);
    // Naming itself does not help: the pod is bound elsewhere.
    const asB = { ...onA, nodeName: 'node-b', nodeUID: onB.nodeUID };
    expect(refusal(await create(nodeB, asB))).toEqual([403, `pod "${NS}/pod-a" is not running on node "node-b" named in the PodCertificateRequest`]);
  });

  it('refuses UIDs that are not the current ones (a pod, account or node recreated under the same name)', async () => {
    expect(refusal(await create(nodeA, { ...onA, podUID: 'stale-pod-uid' }))).toEqual([
      403,
      `PodCertificateRequest for pod "${NS}/pod-a" contains pod UID ("stale-pod-uid") which differs from running pod "${onA.podUID}"`,
    ]);
    expect(refusal(await create(nodeA, { ...onA, serviceAccountUID: 'stale-sa-uid' }))).toEqual([
      403,
      `PodCertificateRequest for pod "${NS}/pod-a" names service account UID "stale-sa-uid", which differs from the running service account ("${onA.serviceAccountUID}")`,
    ]);
    expect(refusal(await create(nodeA, { ...onA, nodeUID: 'stale-node-uid' }))).toEqual([
      403,
      `PodCertificateRequest for pod "${NS}/pod-a" names node UID "stale-node-uid", inconsistent with the running node ("${onA.nodeUID}")`,
    ]);
    expect(refusal(await create(nodeA, { ...onA, serviceAccountName: 'default' }))).toEqual([
      403,
      `PodCertificateRequest for pod "${NS}/pod-a" contains serviceAccountName ("default") that differs from running pod ("workload")`,
    ]);
    expect(refusal(await create(nodeA, { ...onA, podName: 'no-such-pod' }))).toEqual([
      403,
      `while retrieving pod "${NS}/no-such-pod" named in the PodCertificateRequest: pods "no-such-pod" not found`,
    ]);
  });

  it('refuses a signer the pod does not mount, and mirror pods', async () => {
    expect(refusal(await create(nodeA, onA, {}, 'evil.example/any-identity'))).toEqual([
      403,
      `pod "${NS}/pod-a" does not mount a podCertificate projected volume for signer "evil.example/any-identity"`,
    ]);
    // A mirror pod is one from its creation (the annotation cannot be added later), and names no service account.
    const created = await raw(srv, 'POST', `/api/v1/namespaces/${NS}/pods`, {
      body: {
        metadata: { name: 'static', annotations: { 'kubernetes.io/config.mirror': 'hash' } },
        spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'certs', projected: { sources: [{ podCertificate: { signerName: SIGNER, keyType: 'ECDSAP256', credentialBundlePath: 'b.pem' } }] } }] },
      },
    });
    expect(created.status).toBe(201);
    const mirror = { ...onA, podName: 'static', podUID: String(created.json.metadata.uid) };
    expect(refusal(await create(nodeA, mirror))).toEqual([403, `pod "${NS}/static" is a mirror pod`]);
  });

  it('lets a node authorized for request-podcertificate-signer ask for a signer the pod does not mount', async () => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const rules = [{ apiGroups: [''], resources: ['other.example/extra'], verbs: ['request-podcertificate-signer'] }];
    expect((await raw(srv, 'POST', `${rbac}/clusterroles`, { body: { metadata: { name: 'pcr-extra-signer' }, rules } })).status).toBe(201);
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pcr-extra-signer' };
    const subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'system:node:node-a' }];
    expect((await raw(srv, 'POST', `${rbac}/clusterrolebindings`, { body: { metadata: { name: 'pcr-extra-signer' }, roleRef, subjects } })).status).toBe(201);
    expect((await create(nodeA, onA, {}, 'other.example/extra')).status).toBe(201);
    expect((await create(nodeB, onB, {}, 'other.example/extra')).status).toBe(403);
  });

  it('lets a node neither update a request nor write its status', async () => {
    const created = (await create(nodeA, onA)).json;
    const path = pcrPath('v1', NS, created.metadata.name);
    const update = await as(nodeA, 'PUT', path, { ...created, metadata: { ...created.metadata, labels: { x: 'y' } } });
    expect(update.status).toBe(403);
    const status = await as(nodeA, 'PUT', `${path}/status`, { ...created, status: { conditions: [] } });
    expect(status.status).toBe(403);
    expect((await as(nodeA, 'DELETE', path)).status).toBe(403);
  });
});

describe('Node authorizer', () => {
  it('lets a node list and watch only the requests naming it, and get only those', async () => {
    const mine = await as(nodeA, 'GET', `${pcrPath('v1', NS)}?fieldSelector=spec.nodeName%3Dnode-a`);
    expect(mine.status).toBe(200);
    expect(mine.json.items.length).toBeGreaterThan(0);
    expect(new Set(mine.json.items.map((i: { spec: { nodeName: string } }) => i.spec.nodeName))).toEqual(new Set(['node-a']));
    const all = await as(nodeA, 'GET', '/apis/certificates.k8s.io/v1/podcertificaterequests?fieldSelector=spec.nodeName%3Dnode-a');
    expect(all.status).toBe(200);
    const everything = await as(nodeA, 'GET', pcrPath('v1', NS));
    expect([everything.status, everything.json.message]).toEqual([
      403,
      `podcertificaterequests.certificates.k8s.io is forbidden: User "system:node:node-a" cannot list resource "podcertificaterequests" in API group "certificates.k8s.io" in the namespace "${NS}": can only create podcertificaterequests, or get/list/watch those with spec.nodeName=node-a`,
    ]);
    expect((await as(nodeA, 'GET', `${pcrPath('v1', NS)}?watch=1&fieldSelector=spec.nodeName%3Dnode-b`)).status).toBe(403);

    const ofB = (await create(nodeB, onB)).json;
    expect((await as(nodeB, 'GET', pcrPath('v1beta1', NS, ofB.metadata.name))).status).toBe(200);
    const other = await as(nodeA, 'GET', pcrPath('v1', NS, ofB.metadata.name));
    expect([other.status, other.json.message]).toEqual([403, expect.stringMatching(/no relationship found between node 'node-a' and this object$/)]);
  });
});

describe('users', () => {
  beforeAll(async () => {
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' };
    const subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'ns-admin' }];
    const bound = await raw(srv, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { body: { metadata: { name: 'ns-admin' }, roleRef, subjects } });
    expect(bound.status).toBe(201);
  });

  it('keeps a namespace admin from forging a request or reading them', async () => {
    const nsAdmin: Who = { user: 'ns-admin', groups: ['system:authenticated'] };
    expect((await as(nsAdmin, 'GET', `/api/v1/namespaces/${NS}/pods`)).status).toBe(200);
    const forged = await create(nsAdmin, onA);
    expect([forged.status, forged.json.message]).toEqual([
      403,
      `podcertificaterequests.certificates.k8s.io is forbidden: User "ns-admin" cannot create resource "podcertificaterequests" in API group "certificates.k8s.io" in the namespace "${NS}"`,
    ]);
    expect((await as(nsAdmin, 'GET', pcrPath('v1', NS))).status).toBe(403);
  });

  it('gives an anonymous client nothing (anonymous requests reach only the public paths)', async () => {
    const list = await as('anonymous', 'GET', pcrPath('v1', NS));
    expect([list.status, list.json.reason]).toEqual([401, 'Unauthorized']);
    expect((await create('anonymous', onA)).status).toBe(401);
    expect((await as('anonymous', 'GET', '/apis/certificates.k8s.io/v1/podcertificaterequests?watch=1')).status).toBe(401);
    expect((await as({ user: 'system:anonymous', groups: ['system:unauthenticated'] }, 'GET', pcrPath('v1', NS))).status).toBe(403);
  });
});
