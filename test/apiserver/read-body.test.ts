import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../src/apiserver/http/http-io.js';
import { ApiError } from '../../src/apiserver/http/errors.js';

/** A real node:http server whose handler reads each body with readBody and answers what it read. */
describe('readBody', () => {
  let server: http.Server;
  let port = 0;
  const bodies: Buffer[] = [];
  // One connection for every request: each body's bytes arrive on the same socket.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      readBody(req, 64).then(
        (body) => {
          bodies.push(body);
          res.end(body);
        },
        (e: ApiError) => {
          res.writeHead(e.code, { connection: 'close' });
          res.end(e.message);
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => {
    agent.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Sends `parts` as one request body, each part in its own write, a turn of the event loop apart. */
  function send(parts: string[]): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/', agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      const next = (i: number): void => {
        if (i === parts.length) req.end();
        else req.write(parts[i], () => setTimeout(() => next(i + 1), 5));
      };
      next(0);
    });
  }

  it('reads a body sent in one piece or in several, each request its own bytes', async () => {
    expect(await send(['{"a":1}'])).toEqual({ status: 200, body: '{"a":1}' });
    expect(await send(['{"b":', '22', '}'])).toEqual({ status: 200, body: '{"b":22}' });
    expect(await send(['{"c":3}'])).toEqual({ status: 200, body: '{"c":3}' });
    // What a handler kept of an earlier body is not overwritten by the later ones.
    expect(bodies.map((b) => b.toString())).toEqual(['{"a":1}', '{"b":22}', '{"c":3}']);
  });

  it('refuses a body over the limit with 413, whether it came in one piece or several', async () => {
    expect((await send(['x'.repeat(65)])).status).toBe(413);
    expect((await send(['x'.repeat(40), 'y'.repeat(40)])).status).toBe(413);
  });
});
