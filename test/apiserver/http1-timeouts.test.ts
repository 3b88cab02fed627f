/**
 * HTTP/1.1's header and request timeouts hold on the secure port whichever thread did the TLS: the
 * server's own listener or a TLS front (--tls-front-workers). A connection whose request headers have
 * not arrived by the header timeout (kube-apiserver's ReadHeaderTimeout, 32 s) is closed, and so is
 * one whose body has not arrived by the request timeout; neither gets an answer, as Go's server
 * answers no read that timed out. A request that arrives in pieces within them is served. The
 * timeouts are shortened here (300 ms and 800 ms).
 */
import { connect } from 'node:tls';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ADMIN_USER, staticTokenAuthenticator } from '../helpers/static-auth.js';

const TOKEN = 'timeouts-token';

/** What the server sent on a connection that wrote `parts` (the later ones after `gapMs`), once it closed. */
async function exchange(s: TestServer, parts: string[], gapMs = 0): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port: Number(new URL(s.url).port), ca: s.caPem, ALPNProtocols: ['http/1.1'] });
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  const closed = new Promise<void>((resolve, reject) => {
    socket.once('close', () => resolve());
    socket.once('error', reject);
  });
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  for (const [i, part] of parts.entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
    socket.write(part);
  }
  await closed;
  return received;
}

const HEAD = `GET /api/v1/namespaces/default HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n`;

describe.each([0, 1])('with %i TLS front threads', (fronts) => {
  let s: TestServer;
  beforeAll(async () => {
    const authenticator = staticTokenAuthenticator(new Map([[TOKEN, ADMIN_USER]]));
    s = await startTestServer({ authenticator, serving: { tlsFrontWorkers: fronts, headersTimeoutMs: 300, requestTimeoutMs: 800 } });
  });
  afterAll(async () => {
    await s.close();
  });

  it('closes a connection whose request headers did not arrive in time, answering nothing', async () => {
    expect(await exchange(s, [HEAD])).toBe('');
  });

  it('closes a connection whose request body did not arrive in time, answering nothing', async () => {
    const head = `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    expect(await exchange(s, [head, '{"metadata":'])).toBe('');
  });

  it('serves a request whose headers arrive in pieces within the timeout', async () => {
    const answer = await exchange(s, [HEAD, 'Connection: close\r\n', '\r\n'], 50);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });
});
