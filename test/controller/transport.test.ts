/**
 * KubeClient's transport (its own HTTP/1.1 client) against a real HTTPS server: client-certificate TLS and bearer
 * tokens taken from the kubeconfig, one keep-alive connection for typed and raw calls, a new pool
 * when the kubeconfig's certificate changes, Status errors, aborts, and rest_client metrics.
 */
import { CoordinationV1Api } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { HttpStatusError, KubeClient } from '../../src/controller/client/kube-client.js';
import { classifyError } from '../../src/controller/client/errors.js';
import { FakeClock, realClock, type Clock } from '../../src/lib/clock.js';
import { RestClientMetrics } from '../../src/metrics/rest-client.js';
import { FakeApiServer, json } from './fake-apiserver.js';

const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'default', resourceVersion: '7' }, spec: {} };

describe('KubeClient transport', () => {
  let server: FakeApiServer;
  const clients: KubeClient[] = [];
  const newClient = (kc: ReturnType<FakeApiServer['tokenKubeConfig']>, metrics?: RestClientMetrics, clock: Clock = realClock): KubeClient => {
    const c = new KubeClient({ kubeConfig: kc, clock, metrics });
    clients.push(c);
    return c;
  };

  beforeEach(async () => {
    server = await FakeApiServer.start();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server.close();
  });

  it('authenticates with the kubeconfig client certificate and keeps one connection for typed and raw calls', async () => {
    server.writeClientCert(await server.clientCert('alice'));
    server.handler = (req, res) => json(res, 200, req.url?.includes('/leases/') ? lease : { kind: 'Namespace', metadata: { name: 'default' } });
    const client = newClient(server.certFileKubeConfig());
    for (let i = 0; i < 5; i++) {
      const ns = await client.requestJSON<{ metadata: { name: string } }>('GET', '/api/v1/namespaces/default');
      expect(ns.metadata.name).toBe('default');
      const typed = await client.api(CoordinationV1Api).readNamespacedLease({ name: 'l', namespace: 'default' });
      expect(typed.metadata?.resourceVersion).toBe('7');
    }
    expect(server.seen.map((s) => s.clientCN)).toEqual(Array(10).fill('alice'));
    expect(server.seen[1]?.url).toBe('/apis/coordination.k8s.io/v1/namespaces/default/leases/l');
    // Keep-alive: a connection is free again before its reply is handed on, so sequential requests share one.
    expect(server.handshakes).toBe(1);
  });

  it('stays on HTTP/1.1 keep-alive when the server offers HTTP/2', async () => {
    await server.close();
    server = await FakeApiServer.start({ offerH2: true });
    server.writeClientCert(await server.clientCert('alice'));
    server.handler = (_req, res) => json(res, 200, { kind: 'Namespace', metadata: { name: 'default' } });
    const client = newClient(server.certFileKubeConfig());
    for (let i = 0; i < 3; i++) await client.requestJSON('GET', '/api/v1/namespaces/default');
    expect(server.seen.map((s) => [s.httpVersion, s.clientCN])).toEqual(Array(3).fill(['1.1', 'alice']));
    expect(server.handshakes).toBe(1);
  });

  it('starts a new pool when the kubeconfig client certificate is rotated (seen within a second)', async () => {
    server.writeClientCert(await server.clientCert('before'));
    server.handler = (_req, res) => json(res, 200, {});
    const clock = new FakeClock(1_000_000);
    const client = newClient(server.certFileKubeConfig(), undefined, clock);
    await client.requestJSON('GET', '/api/v1/namespaces');
    server.writeClientCert(await server.clientCert('after'));
    await client.requestJSON('GET', '/api/v1/namespaces');
    clock.advance(1000);
    await client.requestJSON('GET', '/api/v1/namespaces');
    await client.requestJSON('GET', '/api/v1/namespaces');
    expect(server.seen.map((s) => s.clientCN)).toEqual(['before', 'before', 'after', 'after']);
  });

  it('sends the bearer token, JSON bodies and query parameters', async () => {
    server.handler = (_req, res, seen) => json(res, 201, { echoed: JSON.parse(seen.body) as unknown });
    const client = newClient(server.tokenKubeConfig('sekrit'));
    const body = { kind: 'SubjectAccessReview', spec: { user: 'ünïcode', groups: ['a', 'b'] } };
    const reply = await client.requestJSON<{ echoed: unknown }>('POST', '/apis/x/v1/things', { dryRun: 'All', empty: '', unset: undefined, labelSelector: 'a in (b,c)' }, undefined, body);
    expect(reply.echoed).toEqual(body);
    const seen = server.seen[0];
    expect(seen?.headers.authorization).toBe('Bearer sekrit');
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.clientCN).toBeUndefined();
    const url = new URL(seen?.url ?? '', server.url);
    expect(url.pathname).toBe('/apis/x/v1/things');
    expect([...url.searchParams.entries()]).toEqual([['dryRun', 'All'], ['labelSelector', 'a in (b,c)']]);
  });

  it('sends a kubeconfig username and password as Basic, and refuses a cluster behind a proxy-url', async () => {
    server.handler = (_req, res) => json(res, 200, {});
    await newClient(server.kubeConfig({ name: 'user', username: 'admin', password: 'pä:ss' })).requestJSON('GET', '/api');
    expect(server.seen[0]?.headers.authorization).toBe(`Basic ${Buffer.from('admin:pä:ss').toString('base64')}`);
    const proxied = newClient(server.kubeConfig({ name: 'user', token: 't' }, { proxyUrl: 'http://127.0.0.1:9' }));
    await expect(proxied.requestJSON('GET', '/api')).rejects.toThrow('kubeconfig proxy-url is not supported by the controller transport');
    expect(server.seen).toHaveLength(1);
  });

  it('rejects a non-2xx reply with HttpStatusError carrying the parsed Status', async () => {
    const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409, message: 'the object has been modified' };
    server.handler = (req, res) => (req.url === '/conflict' ? json(res, 409, status) : res.writeHead(502).end('<html>bad gateway</html>'));
    const client = newClient(server.tokenKubeConfig('t'));
    const conflict = await client.requestJSON('PUT', '/conflict', {}, undefined, {}).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(HttpStatusError);
    expect(conflict).toMatchObject({ code: 409, body: status, message: 'the object has been modified' });
    expect(classifyError(conflict)).toBe('conflict');
    const gateway = await client.requestJSON('GET', '/other').catch((e: unknown) => e);
    expect(gateway).toMatchObject({ code: 502, body: '<html>bad gateway</html>', message: 'HTTP 502' });
    expect(classifyError(gateway)).toBe('retry');
    // Typed APIs keep client-node's ApiException, with the same code.
    const typed = await client.api(CoordinationV1Api).readNamespacedLease({ name: 'l', namespace: 'default' }).catch((e: unknown) => e);
    expect(typed).toMatchObject({ code: 502 });
  });

  it('write() sends the JSON body, discards the reply and keeps the connection', async () => {
    server.handler = (_req, res) => json(res, 200, { big: 'x'.repeat(200_000) });
    const client = newClient(server.tokenKubeConfig('t'));
    await client.write('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/a/approval', { metadata: { resourceVersion: '5' } });
    for (let n = 2; n <= 5; n++) await client.write('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/a/status', { n });
    expect(server.seen.map((s) => [s.method, s.url, JSON.parse(s.body) as unknown]).slice(0, 2)).toEqual([
      ['PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/a/approval', { metadata: { resourceVersion: '5' } }],
      ['PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/a/status', { n: 2 }],
    ]);
    // A large reply is read to its end, not cut off: the connection stays usable.
    expect(server.handshakes).toBe(1);
    server.handler = (_req, res) => json(res, 409, { kind: 'Status', code: 409, reason: 'Conflict' });
    await expect(client.write('PUT', '/x', {})).rejects.toMatchObject({ code: 409 });
  });

  it('aborts an unanswered request and counts every request in rest_client metrics', async () => {
    const registry = new Registry();
    server.handler = (req, res) => {
      if (req.url !== '/hang') json(res, 200, {});
    };
    const client = newClient(server.tokenKubeConfig('t'), RestClientMetrics.for(registry));
    await client.requestJSON('GET', '/ok');
    const abort = new AbortController();
    const pending = client.requestJSON('GET', '/hang', {}, abort.signal);
    await new Promise((r) => setTimeout(r, 50));
    abort.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await client.api(CoordinationV1Api).readNamespacedLease({ name: 'l', namespace: 'default' }).catch(() => undefined);
    const counts = (await registry.getSingleMetric('rest_client_requests_total')?.get())?.values.map((v) => [v.labels.method, v.labels.code, v.value]);
    expect(counts).toEqual([
      ['GET', '200', 2],
      ['GET', '<error>', 1],
    ]);
  });

  it('honours 429 and Retry-After as client-go does: the same request after the wait, at most 10 times', async () => {
    const shed = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Too many requests, please try again later.', reason: 'TooManyRequests', code: 429 };
    let refusals = 2;
    server.handler = (_req, res, seen) => {
      if (refusals-- > 0) res.setHeader('Retry-After', '1');
      if (refusals >= 0) json(res, 429, shed);
      else json(res, 201, { echoed: JSON.parse(seen.body) as unknown });
    };
    const client = newClient(server.tokenKubeConfig('t'));
    const started = Date.now();
    const reply = await client.requestJSON<{ echoed: unknown }>('POST', '/apis/x/v1/things', {}, undefined, { n: 1 });
    expect(reply.echoed).toEqual({ n: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(server.seen.map((s) => s.body)).toEqual(Array(3).fill('{"n":1}'));

    // Without Retry-After a 429 is an error at once; with it, the 11th refusal is returned.
    server.seen.length = 0;
    server.handler = (_req, res) => json(res, 429, shed);
    await expect(client.requestJSON('GET', '/x')).rejects.toMatchObject({ code: 429 });
    expect(server.seen).toHaveLength(1);
    const clock = new FakeClock(0);
    const patient = newClient(server.tokenKubeConfig('t'), undefined, clock);
    server.seen.length = 0;
    server.handler = (_req, res) => {
      res.setHeader('Retry-After', '3');
      json(res, 429, shed);
    };
    let settled = false;
    const refused = patient.requestJSON('GET', '/x').catch((e: unknown) => e).finally(() => (settled = true));
    // Each wait is on the client's clock: time passes for it only here.
    while (!settled) {
      clock.advance(3000);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await refused).toMatchObject({ code: 429, message: 'Too many requests, please try again later.' });
    expect(server.seen).toHaveLength(11);
  });
});
