/**
 * The secure port takes connections as fast as they come: libuv accepts one per listening socket per
 * event-loop turn, so under a join storm's busy loop a single socket left connections waiting in the
 * kernel's queue past the clients' handshake timeout. Many queued connections are accepted in one
 * turn, and a second server still cannot take the port.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { ensureCredentials } from '../../src/apiserver/server/credentials.js';
import { createSecureServer, type SecureServer } from '../../src/apiserver/server/secure-server.js';
import { servingTls } from '../../src/pki/serving-cert-files.js';
import { silentLogger } from '../../src/log/logger.js';

const QUEUED = 48;

/** Connections waiting in the kernel's accept queues of the sockets listening on `port` (/proc/net/tcp: a LISTEN socket's rx_queue). */
function waitingToBeAccepted(port: number): number {
  let waiting = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, , state, queues] = line.trim().split(/\s+/);
    if (state !== '0A' || Number.parseInt(local?.split(':')[1] ?? '', 16) !== port) continue;
    waiting += Number.parseInt(queues?.split(':')[1] ?? '0', 16);
  }
  return waiting;
}

let dataDir: string;
let contextOptions: ReturnType<ReturnType<typeof servingTls>['contextOptions']>;
let caPem: string;
const servers: SecureServer[] = [];
const clients: Socket[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'secure-accept-'));
  const credentials = await ensureCredentials(dataDir);
  caPem = credentials.caPem;
  contextOptions = servingTls({ certPem: credentials.servingCertPem, keyPem: credentials.servingKeyPem, clientCaPem: credentials.caPem }).contextOptions();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function secureServer(): SecureServer {
  const server = createSecureServer(contextOptions, {}, silentLogger(), async (_req, res) => {
    res.end('{}');
  });
  servers.push(server);
  return server;
}

it('accepts many queued connections in one event-loop turn', async () => {
  const port = await secureServer().listen('127.0.0.1', 0, 511);
  for (let i = 0; i < QUEUED; i++) clients.push(connect(port, '127.0.0.1').on('error', () => undefined));
  // node:net connects on the next tick; the kernel completes loopback handshakes at once. No turn
  // of the loop (and so no accept) happens before the queue is read.
  await new Promise<void>((resolve) => process.nextTick(resolve));
  const deadline = Date.now() + 2000;
  while (waitingToBeAccepted(port) < QUEUED && Date.now() < deadline);
  expect(waitingToBeAccepted(port)).toBe(QUEUED);
  // From the check phase, an immediate runs after exactly one poll of the loop: one turn.
  await new Promise<void>((resolve) => setImmediate(resolve));
  const before = waitingToBeAccepted(port);
  await new Promise<void>((resolve) => setImmediate(resolve));
  // One turn: one accept per listening socket that has a connection waiting (16 sockets; the kernel
  // spreads 48 connections over them by their ports), where a single socket took one.
  expect(before - waitingToBeAccepted(port)).toBeGreaterThanOrEqual(8);
});

it('still refuses to share its port with a second server', async () => {
  const port = await secureServer().listen('127.0.0.1', 0, 511);
  await expect(secureServer().listen('127.0.0.1', port, 511)).rejects.toMatchObject({ code: 'EADDRINUSE' });
});

it('serves what every listening socket accepts', async () => {
  const server = secureServer();
  const port = await server.listen('127.0.0.1', 0, 511);
  // Enough connections that every one of the 16 sockets is all but certain to take some.
  const answers = await Promise.all(
    Array.from({ length: 64 }, async () => {
      const socket = tlsConnect({ host: '127.0.0.1', port, ca: caPem, ALPNProtocols: ['http/1.1'] });
      clients.push(socket);
      await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      let text = '';
      for await (const chunk of socket) text += String(chunk);
      return text.split('\r\n')[0];
    }),
  );
  expect(new Set(answers)).toEqual(new Set(['HTTP/1.1 200 OK']));
});
