/**
 * The Node authorizer's graph through the real server, on each in-process store: a node reaches the
 * Secrets, ConfigMaps and service-account tokens of the pods bound to it from the moment the pod is
 * bound (created on it, or bound through pods/binding), loses them the moment the pod is deleted, never
 * reaches another node's (an update cannot move the pod), and
 * nobody who is not that node reaches them this way. Its Secret GET reads no pod from the store.
 */
import { jest } from '@jest/globals';
import type { RangeOptions } from '../../src/apiserver/storage/store.js';
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TOKENS = [
  'node-a-token,system:node:node-a,uid-a,"system:nodes,system:authenticated"',
  'node-b-token,system:node:node-b,uid-b,"system:nodes,system:authenticated"',
  'alice-token,alice,uid-alice,"system:authenticated"',
  // In the nodes group without a node's user name: not a node, so not related to any pod.
  'nodes-group-token,alice-node,uid-g,"system:nodes,system:authenticated"',
].join('\n');

const NS = '/api/v1/namespaces/default';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe.each(['memory', 'sqlite'] as const)('Node authorizer graph on %s', (storage) => {
  let server: TestServer;
  const as = (token: string | undefined) => (method: string, path: string, body?: unknown): Promise<RawResponse> =>
    token === undefined ? raw(server, method, path, { body, anonymous: true }) : raw(server, method, path, { token, body });
  const admin = (method: string, path: string, body?: unknown, contentType?: string): Promise<RawResponse> => raw(server, method, path, { body, contentType });
  const ok = async (p: Promise<RawResponse>): Promise<RawResponse> => {
    const r = await p;
    if (r.status >= 300) throw new Error(`setup failed: ${r.status} ${r.text}`);
    return r;
  };
  const pod = (name: string, nodeName: string, secret: string): unknown => ({
    metadata: { name },
    spec: {
      nodeName,
      serviceAccountName: 'app',
      volumes: [
        { name: 's', secret: { secretName: secret } },
        // The API token volume, as kube-api-access: what a node may ask a token for.
        { name: 'p', projected: { sources: [{ configMap: { name: `cm-${secret}` } }, { serviceAccountToken: { path: 'token' } }] } },
      ],
      containers: [{ name: 'c', image: 'x' }],
    },
  });
  /** What `as` reaches of `secret`'s Secret and ConfigMap and of a token bound to `podName`, by status. */
  const reach = async (who: (m: string, p: string, b?: unknown) => Promise<RawResponse>, secret: string, podName: string): Promise<number[]> => {
    const uid = String((await admin('GET', `${NS}/pods/${podName}`)).json?.metadata?.uid ?? 'gone');
    const token = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: podName, uid } } };
    return [
      (await who('GET', `${NS}/secrets/${secret}`)).status,
      (await who('GET', `${NS}/configmaps/cm-${secret}`)).status,
      (await who('POST', `${NS}/serviceaccounts/app/token`, token)).status,
    ];
  };
  const nodeA = as('node-a-token');
  const nodeB = as('node-b-token');

  beforeAll(async () => {
    server = await startTestServer({ storage, tokenFile: `${TOKENS}\n` });
    await ok(admin('POST', `${NS}/serviceaccounts`, { metadata: { name: 'app' } }));
    for (const s of ['s1', 's2', 's3', 's4']) {
      await ok(admin('POST', `${NS}/secrets`, { metadata: { name: s }, stringData: { k: 'v' } }));
      await ok(admin('POST', `${NS}/configmaps`, { metadata: { name: `cm-${s}` }, data: { k: 'v' } }));
    }
  }, 60_000);
  afterAll(async () => server?.close());

  it('lets a node reach what a pod names from the moment the pod is bound to it, and no other node', async () => {
    expect(await reach(nodeA, 's1', 'p1')).toEqual([403, 403, 403]);
    await ok(admin('POST', `${NS}/pods`, pod('p1', 'node-a', 's1')));
    expect(await reach(nodeA, 's1', 'p1')).toEqual([200, 200, 201]);
    expect(await reach(nodeB, 's1', 'p1')).toEqual([403, 403, 403]);
    const metrics = (await admin('GET', '/metrics')).text;
    expect(metrics).toMatch(/^node_authorizer_graph_actions_duration_seconds_count\{operation="AddPod"\} [1-9]/m);
  });

  it('keeps the access where it is when an update tries to move the pod to another node (spec.nodeName is immutable)', async () => {
    expect((await admin('PATCH', `${NS}/pods/p1`, { spec: { nodeName: 'node-b' } }, 'application/merge-patch+json')).status).toBe(422);
    expect(await reach(nodeA, 's1', 'p1')).toEqual([200, 200, 201]);
    expect(await reach(nodeB, 's1', 'p1')).toEqual([403, 403, 403]);
  });

  it('follows a binding: an unbound pod gives nothing, bound through pods/binding it gives its node access, at once', async () => {
    await ok(admin('POST', `${NS}/pods`, pod('p4', '', 's4')));
    expect(await reach(nodeA, 's4', 'p4')).toEqual([403, 403, 403]);
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p4' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-a' } };
    // A node cannot bind a pod to itself.
    expect((await nodeA('POST', `${NS}/pods/p4/binding`, binding)).status).toBe(403);
    await ok(admin('POST', `${NS}/pods/p4/binding`, binding));
    expect(await reach(nodeA, 's4', 'p4')).toEqual([200, 200, 201]);
    expect(await reach(nodeB, 's4', 'p4')).toEqual([403, 403, 403]);
    await ok(admin('DELETE', `${NS}/pods/p4`));
  });

  it('ends the access when the pod is deleted, at once', async () => {
    await ok(admin('POST', `${NS}/pods`, pod('p2', 'node-a', 's2')));
    expect(await reach(nodeA, 's2', 'p2')).toEqual([200, 200, 201]);
    await ok(admin('DELETE', `${NS}/pods/p2`));
    await ok(admin('DELETE', `${NS}/pods/p1`));
    expect((await nodeA('GET', `${NS}/secrets/s2`)).status).toBe(403);
    expect((await nodeA('GET', `${NS}/configmaps/cm-s2`)).status).toBe(403);
    expect((await nodeA('GET', `${NS}/secrets/s1`)).status).toBe(403);
  });

  it('gives nothing through a bound pod to an anonymous client, a bootstrap token, a namespace user or a non-node in system:nodes', async () => {
    await ok(admin('POST', `${NS}/pods`, pod('p3', 'node-a', 's3')));
    const joinId = storage === 'memory' ? 'abcdef' : 'bcdefa';
    await ok(
      admin('POST', '/api/v1/namespaces/kube-system/secrets', {
        metadata: { name: `bootstrap-token-${joinId}` },
        type: 'bootstrap.kubernetes.io/token',
        data: { 'token-id': b64(joinId), 'token-secret': b64('0123456789abcdef'), 'usage-bootstrap-authentication': b64('true') },
      }),
    );
    // alice may read pods in the namespace, as a namespace user might.
    await ok(admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { metadata: { name: 'pods' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }));
    await ok(
      admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
        metadata: { name: 'alice-pods' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pods' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
      }),
    );
    expect(await reach(nodeA, 's3', 'p3')).toEqual([200, 200, 201]);
    expect((await as('alice-token')('GET', `${NS}/pods/p3`)).status).toBe(200);
    expect(await reach(as(undefined), 's3', 'p3')).toEqual([401, 401, 401]);
    for (const token of [`${joinId}.0123456789abcdef`, 'alice-token', 'nodes-group-token']) {
      expect([token, await reach(as(token), 's3', 'p3')]).toEqual([token, [403, 403, 403]]);
    }
  });

  it("answers a node's Secret GET without listing pods from the store", async () => {
    const range = jest.spyOn(server.store, 'range');
    const podLists = (): number => range.mock.calls.filter(([o]: [RangeOptions]) => o.prefix.startsWith('/registry/core/pods/')).length;
    try {
      for (let i = 0; i < 20; i++) {
        expect((await nodeA('GET', `${NS}/secrets/s3`)).status).toBe(200);
        expect((await nodeA('GET', `${NS}/secrets/s1`)).status).toBe(403);
        expect((await nodeA('GET', `${NS}/pods/p3`)).status).toBe(200);
      }
      expect(podLists()).toBe(0);
      // Nothing else read from the store either, but the namespace finalizer's resync, which lists
      // namespaces whenever it falls due (inside this loop on a loaded host).
      expect(range.mock.calls.map(([o]: [RangeOptions]) => o.prefix).filter((p) => p !== '/registry/core/namespaces/')).toEqual([]);
    } finally {
      range.mockRestore();
    }
  });
});
