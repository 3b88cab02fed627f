/**
 * ServiceAccountTokenNodeBinding (GA in 1.33): `kubectl create token --bound-object-kind Node` asks for
 * a token bound to a Node; the token names the node (name and UID), requests made with it carry them as
 * user extras, and it stops authenticating once that Node is gone (ServiceAccountTokenNodeBindingValidation).
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlWith } from '../kubectl/kubectl.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.close();
});

const review = async (token: string): Promise<{ authenticated?: boolean; user?: { username: string; extra?: Record<string, string[]> } }> => {
  const res = await raw(srv, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
  expect(res.status).toBe(201);
  return res.json.status;
};

it('binds a token to a Node through kubectl, names the node in it, and dies with the node', async () => {
  const node = await raw(srv, 'POST', '/api/v1/nodes', { body: { metadata: { name: 'bound-node' } } });
  expect(node.status).toBe(201);
  const created = await kubectlWith(srv, ['create', 'token', 'default', '-n', 'default', '--bound-object-kind', 'Node', '--bound-object-name', 'bound-node']);
  expect([created.code, created.stderr]).toEqual([0, '']);
  const token = created.stdout.trim();
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, Record<string, unknown>>;
  expect(claims['kubernetes.io']).toMatchObject({ namespace: 'default', node: { name: 'bound-node', uid: node.json.metadata.uid } });

  const live = await review(token);
  expect(live.authenticated).toBe(true);
  expect(live.user?.username).toBe('system:serviceaccount:default:default');
  expect(live.user?.extra).toMatchObject({ 'authentication.kubernetes.io/node-name': ['bound-node'], 'authentication.kubernetes.io/node-uid': [node.json.metadata.uid] });

  expect((await raw(srv, 'DELETE', '/api/v1/nodes/bound-node')).status).toBe(200);
  expect((await review(token)).authenticated).not.toBe(true);
  // A Node of the same name is another object: the token stays dead.
  expect((await raw(srv, 'POST', '/api/v1/nodes', { body: { metadata: { name: 'bound-node' } } })).status).toBe(201);
  expect((await review(token)).authenticated).not.toBe(true);
});
