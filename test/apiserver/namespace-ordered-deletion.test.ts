/**
 * OrderedNamespaceDeletion (kube-apiserver 1.33 beta, GA in 1.34): deleting a namespace removes its
 * pods first, and nothing else while a pod remains, so a workload still shutting down keeps the
 * Secrets, ConfigMaps and RBAC it was running with until it is gone.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const NS = 'ordered';
const at = (path: string): string => `/api/v1/namespaces/${NS}${path}`;

it('deletes pods first and keeps the rest until the last pod is gone', async () => {
  expect((await raw(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).toBe(201);
  const pod = { metadata: { name: 'held', finalizers: ['example.com/hold'] }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
  expect((await raw(s, 'POST', at('/pods'), { body: pod })).status).toBe(201);
  expect((await raw(s, 'POST', at('/pods'), { body: { metadata: { name: 'free' }, spec: pod.spec } })).status).toBe(201);
  expect((await raw(s, 'POST', at('/configmaps'), { body: { metadata: { name: 'settings' }, data: { a: 'b' } } })).status).toBe(201);
  expect((await raw(s, 'POST', at('/secrets'), { body: { metadata: { name: 'creds' }, stringData: { k: 'v' } } })).status).toBe(201);

  expect((await raw(s, 'DELETE', `/api/v1/namespaces/${NS}`)).status).toBe(200);
  // The pod without a finalizer goes; the held one is marked and stays.
  await waitFor('the free pod deleted', async () => ((await raw(s, 'GET', at('/pods/free'))).status === 404 ? true : undefined));
  const held = await raw(s, 'GET', at('/pods/held'));
  expect([held.status, typeof held.json.metadata.deletionTimestamp]).toEqual([200, 'string']);
  // A later pass (content deletions and the resync both trigger one) still leaves everything else.
  await new Promise((r) => setTimeout(r, 300));
  for (const path of ['/configmaps/settings', '/secrets/creds', '/serviceaccounts/default']) {
    expect([path, (await raw(s, 'GET', at(path))).status]).toEqual([path, 200]);
  }
  expect((await raw(s, 'GET', `/api/v1/namespaces/${NS}`)).json.status.phase).toBe('Terminating');

  // Once the last pod is gone, the rest follows and the namespace with it.
  const released = await raw(s, 'PATCH', at('/pods/held'), { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
  expect(released.status).toBe(200);
  await waitFor('the namespace deleted', async () => ((await raw(s, 'GET', `/api/v1/namespaces/${NS}`)).status === 404 ? true : undefined));
  for (const path of ['/configmaps/settings', '/secrets/creds']) expect([path, (await raw(s, 'GET', at(path))).status]).toEqual([path, 404]);
});
