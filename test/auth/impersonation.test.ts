/**
 * Impersonation through the real server, for what an admin's `kubectl --as` tells about others:
 * impersonating system:anonymous puts the user in system:unauthenticated, as upstream's filter does,
 * so `kubectl auth can-i --as=system:anonymous` answers for what a client without credentials may do
 * (the public-info paths), not for a user in no group at all, and not in system:authenticated either;
 * and an Impersonate-Extra key is read as upstream's filter reads it.
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

const asAnonymous = (method: string, path: string, body?: unknown): Promise<RawResponse> => raw(server, method, path, { body, headers: { 'Impersonate-User': 'system:anonymous' } });

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(async () => server?.close());

it('reads the public-info paths as system:anonymous, as a client without credentials does', async () => {
  expect((await raw(server, 'GET', '/version', { anonymous: true })).status).toBe(200);
  expect((await asAnonymous('GET', '/version')).status).toBe(200);
  expect((await asAnonymous('GET', '/healthz')).status).toBe(200);
  expect((await asAnonymous('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(403);
});

it('gets none of system:authenticated\'s grants (SelfSubjectAccessReview is system:basic-user\'s)', async () => {
  const review = await asAnonymous('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { spec: { nonResourceAttributes: { verb: 'get', path: '/version' } } });
  expect(review.status).toBe(403);
});

it('reads an Impersonate-Extra key as upstream: lowercased, then unescaped, and kept as sent when malformed', async () => {
  const extra = async (header: string): Promise<unknown> => {
    const res = await raw(server, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: {}, headers: { 'Impersonate-User': 'bob', [header]: 'v' } });
    return [res.status, res.json?.status?.userInfo?.extra];
  };
  expect(await extra('Impersonate-Extra-Example.com%2FScope%41')).toEqual([201, { 'example.com/scopeA': ['v'] }]);
  expect(await extra('Impersonate-Extra-Bad%zz')).toEqual([201, { 'bad%zz': ['v'] }]);
});
