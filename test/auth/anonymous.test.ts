/**
 * Issue #24, reproduction 5: anonymous access as kube-apiserver (since 1.32) with its configurable
 * endpoints. By default a request without credentials is system:anonymous on /healthz, /livez,
 * /readyz and /version (system:public-info-viewer lets it GET them) and 401 everywhere else, even
 * where RBAC would let system:unauthenticated in; --anonymous-auth=false makes those 401 too.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { KUBE_LEVEL } from '../../src/api/kube-level.js';
import { embeddedOptions } from '../../src/cmd/apiserver.js';
import { loadApiserverConfig } from '../../src/config/load.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PUBLIC = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

describe('anonymous access, --anonymous-auth=true (the default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ storage: 'memory' });
  });
  afterAll(() => server.close());

  it('serves the public-info endpoints to a request without credentials', async () => {
    for (const p of PUBLIC) {
      const res = await raw(server, 'GET', p, { anonymous: true });
      expect([p, res.status]).toEqual([p, 200]);
    }
    expect((await raw(server, 'GET', '/version', { anonymous: true })).json).toMatchObject({ major: KUBE_LEVEL.major, minor: KUBE_LEVEL.minor });
    expect((await raw(server, 'GET', '/healthz', { anonymous: true })).text).toBe('ok');
  });

  it('answers curl without credentials, as a load balancer or probe asks', async () => {
    const ca = path.join(server.dataDir, 'anonymous-ca.crt');
    writeFileSync(ca, server.caPem);
    const curl = async (p: string): Promise<string> =>
      (await promisify(execFile)('curl', ['-sS', '--cacert', ca, '-w', ' %{http_code}', `${server.url}${p}`])).stdout;
    expect(JSON.parse((await curl('/version')).slice(0, -4))).toMatchObject({ major: KUBE_LEVEL.major, minor: KUBE_LEVEL.minor });
    expect(await curl('/readyz')).toBe('ok 200');
    expect(await curl('/api/v1/namespaces/kube-system/secrets')).toMatch(/"reason":"Unauthorized"[^]* 401$/);
  });

  it('is 401 everywhere else, resources, discovery, metrics and named health checks included', async () => {
    for (const p of ['/api', '/apis', '/api/v1/namespaces', '/apis/certificates.k8s.io/v1/certificatesigningrequests', '/metrics', '/readyz/etcd', '/healthz/ping', '/.well-known/openid-configuration', '/openapi/v3', '/versionx', '/nope']) {
      const res = await raw(server, 'GET', p, { anonymous: true });
      expect([p, res.status, res.json?.reason]).toEqual([p, 401, 'Unauthorized']);
    }
  });

  it('lets anonymous only GET there: other verbs are forbidden to system:anonymous', async () => {
    const res = await raw(server, 'POST', '/version', { anonymous: true, body: {} });
    expect(res.status).toBe(403);
    expect(res.json.message).toBe('forbidden: User "system:anonymous" cannot post path "/version"');
  });

  it('never downgrades bad credentials to anonymous', async () => {
    for (const p of ['/healthz', '/version']) expect((await raw(server, 'GET', p, { token: 'not-a-token' })).status).toBe(401);
  });

  it('serves named health checks to the system:monitoring group, as upstream', async () => {
    expect((await raw(server, 'GET', '/readyz/ping')).status).toBe(200);
  });
});

describe('anonymous access, --anonymous-auth=false', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The flag as `kube-identity apiserver` reads it, into the options the server starts with.
    const config = await loadApiserverConfig({ flags: { anonymousAuth: 'false' }, env: {} });
    expect(embeddedOptions(config).anonymousAuth).toBe(false);
    server = await startTestServer({ storage: 'memory', anonymousAuth: embeddedOptions(config).anonymousAuth });
  });
  afterAll(() => server.close());

  it('is 401 on every path without credentials, the public-info endpoints included', async () => {
    for (const p of [...PUBLIC, '/api']) expect([p, (await raw(server, 'GET', p, { anonymous: true })).status]).toEqual([p, 401]);
  });

  it('still serves them with credentials', async () => {
    for (const p of PUBLIC) expect([p, (await raw(server, 'GET', p)).status]).toEqual([p, 200]);
  });
});
