/**
 * Service-account issuer discovery over HTTPS as kube-apiserver serves it: both documents at their paths with and
 * without a trailing slash (the OpenAPI spec's spelling, which generated clients such as the Python client use),
 * readable by any service account through system:service-account-issuer-discovery.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('service-account issuer discovery', () => {
  let s: TestServer;
  let saToken: string;
  beforeAll(async () => {
    s = await startTestServer();
    const tr = await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts/default/token', { body: { spec: {} } });
    expect(tr.status).toBe(201);
    saToken = tr.json.status.token as string;
  });
  afterAll(async () => {
    await s.close();
  });

  it.each([
    ['/.well-known/openid-configuration', 'application/json', 'issuer'],
    ['/.well-known/openid-configuration/', 'application/json', 'issuer'],
    ['/openid/v1/jwks', 'application/jwk-set+json', 'keys'],
    ['/openid/v1/jwks/', 'application/jwk-set+json', 'keys'],
  ])('GET %s as a service account', async (path, contentType, field) => {
    const r = await raw(s, 'GET', path, { token: saToken });
    expect([r.status, r.headers['content-type'], r.headers['cache-control']]).toEqual([200, contentType, 'public, max-age=3600']);
    expect(r.json).toHaveProperty(field);
  });

  it('serves the same document with and without the slash', async () => {
    const [plain, slashed] = await Promise.all([raw(s, 'GET', '/openid/v1/jwks'), raw(s, 'GET', '/openid/v1/jwks/')]);
    expect(slashed.text).toBe(plain.text);
  });
});
