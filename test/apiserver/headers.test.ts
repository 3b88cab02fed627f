/**
 * Request headers up to kube-apiserver's MaxHeaderBytes (1 MiB): a long bearer token is read and
 * judged (401), and headers past the limit get Go's 431 answer instead of a dropped connection or,
 * over HTTP/2, a refused stream.
 */
import { connect } from 'node:tls';
import { raw } from '../helpers/http.js';
import { h2connect, h2request } from '../helpers/http2.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('request header size', () => {
  it('reads a 40 KiB Authorization header and answers 401 for the unknown token', async () => {
    const r = await raw(s, 'GET', '/api/v1/namespaces', { token: 'x'.repeat(40 * 1024) });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  // Over HTTP/1.1: nghttp2 ends the connection on one HTTP/2 field of about 100 KiB (docs/compatibility.md).
  it('serves a request whose headers total 900 KiB', async () => {
    const r = await raw(s, 'GET', '/api/v1/namespaces/default', { headers: { 'X-Padding': 'p'.repeat(900 * 1024) }, protocol: 'http/1.1' });
    expect(r.status).toBe(200);
  });

  it('answers 431 Request Header Fields Too Large past 1 MiB', async () => {
    const r = await raw(s, 'GET', '/api/v1/namespaces', { headers: { 'X-Padding': 'p'.repeat((1 << 20) + 1024) }, protocol: 'http/1.1' });
    expect(r.status).toBe(431);
    expect(r.text).toBe('431 Request Header Fields Too Large');
  });
  it('answers an HTTP/2 header list past the limit 431 on its stream, as Go\'s server does, and serves on the connection', async () => {
    const admin = s.admin as { certPem: string; keyPem: string };
    const session = await h2connect(s.url, { ca: s.caPem, cert: admin.certPem, key: admin.keyPem, maxSendHeaderBlockLength: 4 << 20 });
    try {
      // 550-byte fields, repeated: HPACK sends each repeat as an index, so the list is long in
      // HTTP/2's count (name, value and 32 per field) but a few KiB on the wire.
      const padding = (fields: number): Record<string, string[]> => ({ 'x-padding': Array<string>(fields).fill('p'.repeat(550)) });
      const over = await h2request(session, 'GET', '/api/v1/namespaces/default', { headers: padding(1900) });
      expect(over.status).toBe(431);
      expect(over.text).toBe('<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>');
      // Just under Go's limit (1 MiB and ten fields' 32), on the same connection: served.
      expect((await h2request(session, 'GET', '/api/v1/namespaces/default', { headers: padding(1700) })).status).toBe(200);
      expect((await h2request(session, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
    } finally {
      session.close();
    }
  });

  it('answers a request the HTTP parser refuses with 400, as Go does, rather than dropping it', async () => {
      const url = new URL(s.url);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port), ca: s.caPem }, () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let out = '';
      socket.on('data', (c: Buffer) => (out += c.toString('utf8')));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  });
});

describe('response headers', () => {
  for (const protocol of ['http/1.1', 'h2'] as const) {
    it(`writes the type, exact length and kube-apiserver's Cache-Control default (${protocol})`, async () => {
      const r = await raw(s, 'GET', '/api/v1/namespaces/default', { protocol });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.text));
      expect(r.headers['cache-control']).toBe('no-cache, private');
      expect(r.json).toMatchObject({ kind: 'Namespace', metadata: { name: 'default' } });
    });

    it(`keeps the headers a handler set before the body: Warning beside the defaults (${protocol})`, async () => {
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `warned-${protocol.replace('/', '')}` }, data: { a: 'é' }, bogus: 1 };
      const r = await raw(s, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Warn', { body, protocol });
      expect(r.status).toBe(201);
      expect(r.headers.warning).toBe(`299 - ${JSON.stringify('unknown field "bogus"')}`);
      expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.text));
      expect(r.headers['cache-control']).toBe('no-cache, private');
    });
  }

  it('answers a Status error with the same headers', async () => {
    const r = await raw(s, 'GET', '/api/v1/namespaces/default/configmaps/absent');
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toBe('application/json');
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.text));
    expect(r.headers['cache-control']).toBe('no-cache, private');
  });
});
