/**
 * The secure port takes connections as fast as they come: libuv accepts one per listening socket per
 * event-loop turn, so under a join storm's busy loop a single socket left connections waiting in the
 * kernel's queue past the clients' handshake timeout. Many queued connections are accepted in one
 * turn, and a second server still cannot take the port.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { ensureCredentials } from '../../src/apiserver/server/credentials.js';
import { createSecureServer, type SecureServer, type SecureServingOptions } from '../../src/apiserver/server/secure-server.js';
import { ACCEPTORS, HANDSHAKES_PER_TURN } from '../../src/apiserver/server/secure-accept.js';
import { servingTls } from '../../src/pki/serving-cert-files.js';
import { silentLogger } from '../../src/log/logger.js';

const QUEUED = 48;

/** The rx_queue of each socket listening on `port` (/proc/net/tcp): the connections waiting to be accepted there. */
function listeners(port: number): number[] {
  const queues: number[] = [];
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, , state, queue] = line.trim().split(/\s+/);
    if (state !== '0A' || Number.parseInt(local?.split(':')[1] ?? '', 16) !== port) continue;
    queues.push(Number.parseInt(queue?.split(':')[1] ?? '0', 16));
  }
  return queues;
}

/** Connections waiting in the kernel's accept queues of the sockets listening on `port`. */
const waitingToBeAccepted = (port: number): number => listeners(port).reduce((a, b) => a + b, 0);

/** Until the kernel has handed every connection to `port` to the server (turns of this loop). */
async function allAccepted(port: number): Promise<void> {
  while (waitingToBeAccepted(port) > 0) await new Promise<void>((resolve) => setImmediate(resolve));
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

function secureServer(opts: SecureServingOptions = {}): SecureServer {
  const server = createSecureServer(contextOptions, opts, silentLogger(), async (_req, res) => {
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
  // One turn: one accept per listening socket that has a connection waiting (ACCEPTORS sockets; the kernel
  // spreads 48 connections over them by their ports), where a single socket took one.
  expect(before - waitingToBeAccepted(port)).toBeGreaterThanOrEqual(8);
});

it('serves what every listening socket accepts', async () => {
  const server = secureServer();
  const port = await server.listen('127.0.0.1', 0, 511);
  // Enough connections that most of the sockets take some.
  const answers = await Promise.all(Array.from({ length: 64 }, () => realRequest(port)));
  expect(new Set(answers)).toEqual(new Set(['HTTP/1.1 200 OK']));
});

/** A raw connection to `port` that records what the server sends and whether the server closed it. */
interface RawClient {
  socket: Socket;
  received: number;
  closed: Promise<void>;
}

function rawClient(port: number): RawClient {
  const socket = connect(port, '127.0.0.1').on('error', () => undefined);
  clients.push(socket);
  const c: RawClient = { socket, received: 0, closed: new Promise<void>((resolve) => socket.once('close', () => resolve())) };
  socket.on('data', (chunk: Buffer) => (c.received += chunk.length));
  return c;
}

/** The bytes of a real ClientHello (ALPN h2 and http/1.1), as a client sends it first on a connection. */
async function clientHello(): Promise<Buffer> {
  const hello = new Promise<Buffer>((resolve) => {
    const capture = createNetServer((socket) =>
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk);
        socket.destroy();
        capture.close();
      }),
    );
    capture.listen(0, '127.0.0.1', () => {
      const port = (capture.address() as AddressInfo).port;
      tlsConnect({ host: '127.0.0.1', port, ca: caPem, ALPNProtocols: ['h2', 'http/1.1'] }).on('error', () => undefined);
    });
  });
  return hello;
}

/** A real client's TLS handshake and one HTTP/1.1 request: the status line it gets. */
async function realRequest(port: number): Promise<string | undefined> {
  const socket = tlsConnect({ host: '127.0.0.1', port, ca: caPem, ALPNProtocols: ['http/1.1'] });
  clients.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  let text = '';
  for await (const chunk of socket) text += String(chunk);
  return text.split('\r\n')[0];
}

describe.each([
  ['on its own thread', {}],
  ['behind two TLS fronts', { tlsFrontWorkers: 2 }],
] as const)('a secure port %s', (_where, serving) => {
  it(`listens on ${ACCEPTORS} sockets per accepting thread`, async () => {
    const port = await secureServer(serving).listen('127.0.0.1', 0, 511);
    expect(listeners(port)).toHaveLength(ACCEPTORS * ('tlsFrontWorkers' in serving ? serving.tlsFrontWorkers : 1));
  });

  it('still refuses to share its port with a second server', async () => {
    const port = await secureServer(serving).listen('127.0.0.1', 0, 511);
    await expect(secureServer().listen('127.0.0.1', port, 511)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await expect(secureServer({ tlsFrontWorkers: 1 }).listen('127.0.0.1', port, 511)).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('serves a real client while hundreds of connections send nothing and more send a ClientHello and stall', async () => {
    const port = await secureServer(serving).listen('127.0.0.1', 0, 511);
    const hello = await clientHello();
    const silent = Array.from({ length: 300 }, () => rawClient(port));
    const stalled = Array.from({ length: 100 }, () => rawClient(port));
    await allAccepted(port);
    for (const c of stalled) c.socket.write(hello);
    // Each stalled connection got its server's first flight and now holds a handshake that waits for
    // it; none of them, and none of the silent ones, keeps the real client's handshake from starting.
    await Promise.all(stalled.map((c) => new Promise<void>((resolve) => c.socket.once('data', () => resolve()))));
    expect(await realRequest(port)).toBe('HTTP/1.1 200 OK');
    expect(silent.every((c) => !c.socket.destroyed && c.received === 0)).toBe(true);
  });

  it('closes, unread, a connection that waited past the limit, and serves one that did not', async () => {
    const port = await secureServer({ ...serving, handshakeWaitMs: 300 }).listen('127.0.0.1', 0, 511);
    const hello = await clientHello();
    const silent = rawClient(port);
    await silent.closed;
    expect(silent.received).toBe(0);
    // The limit is the server's: a connection that sends its ClientHello at once is served.
    const prompt = rawClient(port);
    prompt.socket.write(hello);
    await new Promise<void>((resolve) => prompt.socket.once('data', () => resolve()));
    expect(prompt.received).toBeGreaterThan(0);
    expect(await realRequest(port)).toBe('HTTP/1.1 200 OK');
  });
});

// One accepting thread each, so which connections are the oldest is known.
describe.each([
  ['on its own thread', {}],
  ['behind one TLS front', { tlsFrontWorkers: 1 }],
] as const)('a secure port %s', (_where, serving) => {
  it('holds no more waiting connections than its backlog: the oldest are closed, unread, for new ones', async () => {
    // A paused socket notices no close: redials would fill the process's descriptors with dead ones.
    const backlog = 32;
    const port = await secureServer(serving).listen('127.0.0.1', 0, backlog);
    const silent: RawClient[] = [];
    for (let i = 0; i < backlog + 8; i++) {
      silent.push(rawClient(port));
      await new Promise<void>((resolve) => silent.at(-1)!.socket.once('connect', resolve));
      await allAccepted(port);
    }
    // Long before the handshake wait (10 s), the eight oldest are closed and no newer one.
    await Promise.all(silent.slice(0, 8).map((c) => c.closed));
    expect(silent.slice(0, 8).every((c) => c.received === 0)).toBe(true);
    expect(silent.slice(8).filter((c) => c.socket.destroyed)).toEqual([]);
    expect(await realRequest(port)).toBe('HTTP/1.1 200 OK');
  });

});

it('starts no handshake for a client that sent its ClientHello and left while it waited', async () => {
  const port = await secureServer().listen('127.0.0.1', 0, 511);
  const hello = await clientHello();
  const waiting: RawClient[] = [];
  for (let i = 0; i < 3 * HANDSHAKES_PER_TURN; i++) {
    waiting.push(rawClient(port));
    await new Promise<void>((resolve) => waiting.at(-1)!.socket.once('connect', resolve));
    await allAccepted(port);
  }
  // Accepted last, so served last: by their turn their clients have timed out and closed (a FIN
  // after the ClientHello, as a client that gave up sends).
  const gone: RawClient[] = [];
  for (let i = 0; i < 8; i++) {
    gone.push(rawClient(port));
    await new Promise<void>((resolve) => gone.at(-1)!.socket.once('connect', resolve));
    await allAccepted(port);
  }
  for (const c of gone) c.socket.end(hello);
  for (const c of waiting) c.socket.write(hello);
  await Promise.all(gone.map((c) => c.closed));
  // Half closed, each would still have read a server's first flight: none was sent.
  expect(gone.map((c) => c.received)).toEqual(Array(gone.length).fill(0));
  // And the connections still waited for were all served.
  while (waiting.some((c) => c.received === 0)) await new Promise<void>((resolve) => setTimeout(resolve, 10));
});

it(`starts the oldest connections' handshakes first, ${HANDSHAKES_PER_TURN} per turn, and in time every one`, async () => {
  const port = await secureServer().listen('127.0.0.1', 0, 511);
  const hello = await clientHello();
  const waiting: RawClient[] = [];
  // Accepted one after another, so each is newer than the one before.
  for (let i = 0; i < 3 * HANDSHAKES_PER_TURN; i++) {
    waiting.push(rawClient(port));
    await new Promise<void>((resolve) => waiting.at(-1)!.socket.once('connect', resolve));
    await allAccepted(port);
  }
  const answered: number[] = [];
  waiting.forEach((c, i) => c.socket.once('data', () => answered.push(i)));
  // Every ClientHello is in the kernel before the server's loop turns again: it reads them all in one turn.
  for (const c of waiting) c.socket.write(hello);
  await Promise.all(waiting.map((c) => new Promise<void>((resolve) => (c.received > 0 ? resolve() : c.socket.once('data', () => resolve())))));
  const oldest = waiting.map((_, i) => i).slice(0, HANDSHAKES_PER_TURN);
  expect(answered.slice(0, HANDSHAKES_PER_TURN).sort((a, b) => a - b)).toEqual(oldest);
  expect(answered).toHaveLength(waiting.length);
});

it('starts no handshake for a connection that waited most of its client\'s handshake timeout, and serves a newer one', async () => {
  const port = await secureServer({ handshakeWaitMs: 1000 }).listen('127.0.0.1', 0, 511);
  const hello = await clientHello();
  const late = rawClient(port);
  await new Promise<void>((resolve) => late.socket.once('connect', resolve));
  await allAccepted(port);
  late.socket.write(hello);
  // The loop is held 0.85 s (a busy one): by the turn that reads its ClientHello, too little of the
  // client's 1 s is left for a handshake to finish in.
  const until = performance.now() + 850;
  while (performance.now() < until);
  const fresh = rawClient(port);
  fresh.socket.write(hello);
  await Promise.race([late.closed, new Promise<void>((resolve) => late.socket.once('data', () => resolve()))]);
  expect(late.received).toBe(0);
  await late.closed;
  await new Promise<void>((resolve) => fresh.socket.once('data', () => resolve()));
  expect(fresh.received).toBeGreaterThan(0);
});
