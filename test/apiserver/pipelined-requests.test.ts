/**
 * Pipelined HTTP/1.1 requests are served one at a time per connection, as Go's server serves them.
 * node:http handed every pipelined request to the handlers at once: an anonymous client that sent
 * thousands of `GET /version` on one connection and read nothing took every seat of its priority
 * level, and once node:http had paused the connection it never saw the client leave, so the seats
 * stayed taken and every later request of the level was answered 429.
 */
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

async function connect(): Promise<TLSSocket> {
  const socket = tlsConnect({ host: '127.0.0.1', port: Number(new URL(s.url).port), ca: s.caPem, ALPNProtocols: ['http/1.1'] });
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  return socket;
}

const versionRequests = (n: number): string => 'GET /version HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(n);

it('answers pipelined requests in order', async () => {
  const socket = await connect();
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.write(versionRequests(3));
  await until('three answers', () => text.split('HTTP/1.1 ').length === 4);
  expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
  socket.destroy();
});

it('leaves no seat taken by a client that pipelined thousands of requests, read nothing and left', async () => {
  const socket = await connect();
  const batch = versionRequests(100);
  let sent = 0;
  const pump = (): void => {
    while (sent++ < 200) if (!socket.write(batch)) return void socket.once('drain', pump);
  };
  pump();
  await sleep(3000);
  socket.destroy();
  await until('an anonymous request to be served', async () => (await raw(s, 'GET', '/version', { anonymous: true })).status === 200, 10_000);
}, 30_000);
