/**
 * Pods' /status through the real server, as a node (or anyone granted pods/status) would abuse it:
 * it writes status and metadata, never the spec, and, as upstream's podStatusStrategy, neither the
 * owner references (which would hand the pod to the garbage collector) nor the mirror pod
 * annotation (a pod turned into a mirror pod stops giving its node its Secrets, and a mirror pod
 * turned into a regular one would pass for what NodeRestriction never admitted).
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubeletClientCert } from '../helpers/kubelet-cert.js';

const NS = '/api/v1/namespaces/default';
const MIRROR = 'kubernetes.io/config.mirror';
let server: TestServer;
let nodeA: { certPem: string; keyPem: string };
let nodeUid = '';

const admin = (method: string, p: string, body?: unknown): Promise<RawResponse> => raw(server, method, p, { body });
const asNode = (method: string, p: string, body?: unknown): Promise<RawResponse> =>
  raw(server, method, p, { client: nodeA, body, contentType: method === 'PATCH' ? 'application/merge-patch+json' : undefined });
const ok = async (p: Promise<RawResponse>): Promise<RawResponse> => {
  const r = await p;
  if (r.status >= 300) throw new Error(`setup failed: ${r.status} ${r.text}`);
  return r;
};

beforeAll(async () => {
  server = await startTestServer();
  nodeA = await kubeletClientCert(server, 'node-a');
  nodeUid = String((await ok(asNode('POST', '/api/v1/nodes', { metadata: { name: 'node-a' } }))).json?.metadata?.uid);
  await ok(admin('POST', `${NS}/secrets`, { metadata: { name: 'app-secret' }, stringData: { k: 'v' } }));
  await ok(
    admin('POST', `${NS}/pods`, {
      metadata: { name: 'app' },
      spec: { nodeName: 'node-a', volumes: [{ name: 's', secret: { secretName: 'app-secret' } }], containers: [{ name: 'c', image: 'x' }] },
    }),
  );
}, 60_000);
afterAll(async () => server?.close());

it('refuses to make a regular pod a mirror pod through /status, and the node keeps its pod\'s Secret', async () => {
  const res = await asNode('PATCH', `${NS}/pods/app/status`, { metadata: { annotations: { [MIRROR]: 'x' } } });
  expect([res.status, res.json?.message]).toEqual([422, `Pod "app" is invalid: metadata.annotations[${MIRROR}]: Forbidden: may not add mirror pod annotation`]);
  expect((await admin('GET', `${NS}/pods/app`)).json?.metadata?.annotations?.[MIRROR]).toBeUndefined();
  expect((await asNode('GET', `${NS}/secrets/app-secret`)).status).toBe(200);
});

it('keeps a pod\'s owner references whatever /status sends, and still writes its status', async () => {
  const owner = { apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: nodeUid, blockOwnerDeletion: true };
  const res = await asNode('PATCH', `${NS}/pods/app/status`, { metadata: { ownerReferences: [owner] }, status: { phase: 'Running' } });
  expect(res.status).toBe(200);
  const stored = (await admin('GET', `${NS}/pods/app`)).json;
  expect([stored?.metadata?.ownerReferences, stored?.status?.phase]).toEqual([undefined, 'Running']);
});

it('refuses to make a mirror pod a regular one through /status', async () => {
  const mirror = {
    metadata: { name: 'static', annotations: { [MIRROR]: 'hash' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: nodeUid, controller: true }] },
    spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] },
  };
  await ok(asNode('POST', `${NS}/pods`, mirror));
  const res = await asNode('PATCH', `${NS}/pods/static/status`, { metadata: { annotations: { [MIRROR]: null } } });
  expect([res.status, res.json?.message]).toEqual([422, `Pod "static" is invalid: metadata.annotations[${MIRROR}]: Forbidden: may not remove or update mirror pod annotation`]);
  expect((await admin('GET', `${NS}/pods/static`)).json?.metadata?.ownerReferences).toHaveLength(1);
});
