/**
 * The controller's HTTP/1.1 client (src/controller/client/http1.ts) against a TCP server that writes
 * scripted bytes: every framing a server or proxy may use (Content-Length, chunked cut anywhere,
 * a body ended by close, 1xx before the reply, no body for 204/HEAD), keep-alive reuse, a kept-alive
 * connection the server closed, broken replies, header injection, and the body timeout.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Http1Pool, type BodySink } from '../../src/controller/client/http1.js';

interface Script {
  /** Answers one request (its raw bytes) on `socket`; several requests may come on one connection. */
  (request: string, socket: net.Socket): void;
}

describe('Http1Pool', () => {
  let server: net.Server;
  let pool: Http1Pool;
  let script: Script;
  const requests: string[] = [];
  let connections = 0;

  beforeEach(async () => {
    requests.length = 0;
    connections = 0;
    server = net.createServer((socket) => {
      connections++;
      let buf = '';
      socket.on('data', (chunk: Buffer) => {
        buf += chunk.toString('latin1');
        for (;;) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
          if (buf.length < end + 4 + length) return;
          const request = buf.slice(0, end + 4 + length);
          buf = buf.slice(request.length);
          requests.push(request);
          script(request, socket);
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    pool = new Http1Pool({ url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), tls: {} });
  });
  afterEach(async () => {
    pool.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const get = (path = '/x', headers: Record<string, string> = {}): Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }> =>
    pool.request({ method: 'GET', path, headers }).then((r) => ({ statusCode: r.statusCode, body: r.body.toString('utf8'), headers: r.headers }));

  it('sends head and body in one request with Content-Length, and reuses the connection', async () => {
    script = (_req, s) => s.write('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-A: 1\r\nx-a: 2\r\n\r\n{"ok":true}');
    for (let i = 0; i < 3; i++) {
      const r = await pool.request({ method: 'PUT', path: '/a?b=c', headers: { accept: 'application/json', authorization: 'Bearer t' }, body: '{"ü":1}' });
      expect([r.statusCode, r.body.toString(), r.headers['content-type'], r.headers['x-a']]).toEqual([201, '{"ok":true}', 'application/json', '1, 2']);
    }
    expect(connections).toBe(1);
    const port = (server.address() as AddressInfo).port;
    // The server keeps bytes as latin1 (so Content-Length counts bytes); the body went out as UTF-8.
    expect(Buffer.from(requests[0] ?? '', 'latin1').toString('utf8')).toBe(`PUT /a?b=c HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\naccept: application/json\r\nauthorization: Bearer t\r\ncontent-length: 8\r\n\r\n{"ü":1}`);
  });

  it('reads chunked bodies cut anywhere, skips 1xx answers and trailers, and reads a body ended by close', async () => {
    const reply = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n';
    for (const cut of [1, 20, 30, 60, 75, 80, reply.length - 3, reply.length - 1]) {
      script = (_req, s) => {
        s.write(reply.slice(0, cut));
        setTimeout(() => s.write(reply.slice(cut)), 5);
      };
      expect(await get()).toMatchObject({ statusCode: 200, body: 'hello, world' });
    }
    expect(connections).toBe(1);
    script = (_req, s) => s.end('HTTP/1.0 200 OK\r\n\r\nuntil the end');
    expect(await get()).toMatchObject({ statusCode: 200, body: 'until the end' });
    // 204 and HEAD have no body whatever the head says; Connection: close is honoured.
    script = (req, s) => s.write(req.startsWith('HEAD') ? 'HTTP/1.1 200 OK\r\nContent-Length: 99\r\nConnection: close\r\n\r\n' : 'HTTP/1.1 204 No Content\r\n\r\n');
    expect(await get()).toMatchObject({ statusCode: 204, body: '' });
    const head = await pool.request({ method: 'HEAD', path: '/', headers: {} });
    expect([head.statusCode, head.body.length]).toEqual([200, 0]);
    expect(await get()).toMatchObject({ statusCode: 204 });
    expect(connections).toBe(3);
  });

  it('streams a 2xx body to its sink, reads other replies in full, and stop() ends the stream', async () => {
    const chunks: string[] = [];
    const ends: unknown[] = [];
    const sink: BodySink = { data: (c) => chunks.push(c.toString()), end: (err) => ends.push(err ?? 'clean') };
    let held: net.Socket | undefined;
    script = (_req, s) => {
      held = s;
      s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n');
    };
    const r = await pool.request({ method: 'GET', path: '/watch', headers: {} }, undefined, sink);
    expect(r.statusCode).toBe(200);
    held?.write('2\r\nde\r\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(chunks.join('')).toBe('abcde');
    r.stop();
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ name: 'AbortError' });
    script = (_req, s) => s.write('HTTP/1.1 410 Gone\r\nContent-Length: 4\r\n\r\ngone');
    const gone = await pool.request({ method: 'GET', path: '/watch', headers: {} }, undefined, sink);
    expect([gone.statusCode, gone.body.toString()]).toEqual([410, 'gone']);
  });

  it('sends a GET again when the server closed the kept-alive connection unanswered, never a PUT', async () => {
    let n = 0;
    script = (_req, s) => {
      if (++n === 2) s.destroy();
      else s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    };
    expect(await get()).toMatchObject({ body: 'ok' });
    expect(await get()).toMatchObject({ body: 'ok' });
    expect([n, connections]).toEqual([3, 2]);
    n = 1;
    await expect(pool.request({ method: 'PUT', path: '/p', headers: {}, body: '{}' })).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(n).toBe(2);
  });

  it('fails on a broken reply, a header holding a line break, an abort and a silent server', async () => {
    script = (_req, s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    await expect(get()).rejects.toThrow('invalid chunk size from the API server');
    script = (_req, s) => s.write('SSH-2.0-OpenSSH\r\n\r\n');
    await expect(get()).rejects.toThrow('malformed response head from the API server');
    await expect(get('/x', { authorization: 'Bearer t\r\nx-injected: 1' })).rejects.toThrow('holds a line break');
    await expect(get('/x y')).rejects.toThrow('white space');
    script = () => {};
    const abort = new AbortController();
    const pending = pool.request({ method: 'GET', path: '/hang', headers: {} }, abort.signal);
    setTimeout(() => abort.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await expect(pool.request({ method: 'GET', path: '/hang', headers: {}, bodyTimeoutMs: 50 })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    expect(requests.filter((r) => r.includes('injected'))).toEqual([]);
  });
});
