/**
 * Namespace deletion as kube-apiserver and the namespace controller do it: the namespace turns
 * Terminating (deletionTimestamp, phase) and stays while its contents are deleted, content
 * finalizers hold it, creates in it are refused, and it disappears once everything is gone.
 */
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, type KubectlResult } from './kubectl.js';

let srv: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;

beforeAll(async () => {
  srv = await startTestServer();
  kubectl = kubectlFor(srv);
});

afterAll(async () => {
  await srv.close();
});

it('creates namespaces Active with the kubernetes finalizer, kept next to user finalizers', async () => {
  expect((await kubectl('create', 'namespace', 'plain')).stdout).toBe('namespace/plain created\n');
  const plain = await raw(srv, 'GET', '/api/v1/namespaces/plain');
  expect(plain.json).toMatchObject({ spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
  const own = await raw(srv, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'own' }, spec: { finalizers: ['example.com/x'] } } });
  expect(own.json.spec.finalizers).toEqual(['example.com/x', 'kubernetes']);
});

it('kubectl delete namespace waits until the namespace and its contents are gone', async () => {
  expect((await kubectl('create', 'namespace', 'quick')).code).toBe(0);
  expect((await kubectl('create', 'configmap', 'c', '-n', 'quick', '--from-literal=a=b')).code).toBe(0);
  const del = await kubectl('delete', 'namespace', 'quick');
  expect(del).toEqual({ code: 0, stdout: 'namespace "quick" deleted\n', stderr: '' });
  expect((await raw(srv, 'GET', '/api/v1/namespaces/quick')).status).toBe(404);
  expect((await raw(srv, 'GET', '/api/v1/namespaces/quick/configmaps/c')).status).toBe(404);
});

it('a dry-run delete answers Terminating and changes nothing', async () => {
  const dry = await raw(srv, 'DELETE', '/api/v1/namespaces/plain?dryRun=All');
  expect(dry.json.status.phase).toBe('Terminating');
  const after = await raw(srv, 'GET', '/api/v1/namespaces/plain');
  expect(after.json.status.phase).toBe('Active');
  expect(after.json.metadata.deletionTimestamp).toBeUndefined();
});

it('stays Terminating while content finalizers hold it, then goes', async () => {
  const NS = '/api/v1/namespaces/doomed';
  expect((await kubectl('create', 'namespace', 'doomed')).code).toBe(0);
  const held = await raw(srv, 'POST', `${NS}/configmaps`, { body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
  expect(held.status).toBe(201);
  expect((await kubectl('create', 'secret', 'generic', 's', '-n', 'doomed', '--from-literal=a=b')).code).toBe(0);

  const del = await raw(srv, 'DELETE', NS);
  expect(del.status).toBe(200);
  expect(del.json).toMatchObject({ kind: 'Namespace', spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } });
  expect(del.json.metadata.deletionTimestamp).toEqual(expect.any(String));

  // Unheld content goes; held content is marked and keeps the namespace.
  expect((await kubectl('wait', '--for=delete', 'secret/s', '-n', 'doomed', '--timeout=10s')).code).toBe(0);
  const get = await kubectl('get', 'namespace', 'doomed', '--no-headers');
  expect(get.stdout).toMatch(/^doomed\s+Terminating\s+\S+\n$/);
  expect((await raw(srv, 'GET', `${NS}/configmaps/held`)).json.metadata.deletionTimestamp).toEqual(expect.any(String));

  const create = await raw(srv, 'POST', `${NS}/configmaps`, { body: { metadata: { name: 'late' } } });
  expect(create.status).toBe(403);
  expect(create.json.message).toBe('configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated');

  const again = await raw(srv, 'DELETE', NS);
  expect(again.status).toBe(200);
  expect(again.json.metadata.resourceVersion).toBe(del.json.metadata.resourceVersion);

  const release = await kubectl('patch', 'configmap', 'held', '-n', 'doomed', '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
  expect(release.code).toBe(0);
  expect((await kubectl('wait', '--for=delete', 'namespace/doomed', '--timeout=10s')).code).toBe(0);
  const gone = await kubectl('get', 'namespace', 'doomed');
  expect(gone.stderr).toBe('Error from server (NotFound): namespaces "doomed" not found\n');
});

it('keeps a namespace whose other spec finalizers remain, as upstream does until /finalize', async () => {
  const cur = await raw(srv, 'GET', '/api/v1/namespaces/own');
  const w = await openWatch(srv, `/api/v1/namespaces?watch=1&fieldSelector=metadata.name=own&resourceVersion=${cur.json.metadata.resourceVersion}`);
  expect((await raw(srv, 'DELETE', '/api/v1/namespaces/own')).status).toBe(200);
  const [terminating, finalized] = await w.waitFor(2);
  w.close();
  expect(terminating).toMatchObject({ type: 'MODIFIED', object: { spec: { finalizers: ['example.com/x', 'kubernetes'] }, status: { phase: 'Terminating' } } });
  expect(finalized).toMatchObject({ type: 'MODIFIED', object: { spec: { finalizers: ['example.com/x'] }, status: { phase: 'Terminating' } } });
  expect((await raw(srv, 'GET', '/api/v1/namespaces/own/serviceaccounts/default')).status).toBe(404);
  expect((await raw(srv, 'GET', '/api/v1/namespaces/own')).json.spec.finalizers).toEqual(['example.com/x']);
});
