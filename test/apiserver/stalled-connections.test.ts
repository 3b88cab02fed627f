/**
 * Connections that stall before a request is whole are closed on the secure port, whichever thread
 * does the TLS (the server's own listener or a TLS front), as kube-apiserver's Go server closes them:
 * a TLS handshake that starts and never finishes within ReadHeaderTimeout (32 s, which Go applies to
 * the handshake; node:tls would wait 120 s), and an HTTP/2 connection whose only request stopped
 * halfway through its header block (HEADERS without END_HEADERS, no CONTINUATION) once it has been
 * idle for the idle timeout (90 s), where it used to stay open for as long as the client liked;
 * and an HTTP/2 connection the server ended (GOAWAY after an unauthenticated request, idle timeout)
 * whose client never ends its side, which node:http2 left half-open, holding its descriptor, for ever;
 * and an HTTP/2 connection that never sends its preface, within the header timeout as Go bounds its
 * wait for the preface (node:http2 waited for the idle timeout).
 * (HTTP/1.1's header timeout is http1-timeouts.test.ts's.) The timeouts are shortened here.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect } from 'node:tls';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ADMIN_USER, staticTokenAuthenticator } from '../helpers/static-auth.js';

const HEADERS_TIMEOUT_MS = 300;
const IDLE_TIMEOUT_MS = 500;
/** Far below the defaults the server would otherwise apply (120 s; for ever), far above the shortened ones. */
const WITHIN_MS = 8_000;

/** How long after `ready` the server closed `socket`, or -1 if it was still open after WITHIN_MS. */
async function closedWithin(socket: Socket, ready: Promise<unknown>): Promise<number> {
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await ready;
  const start = Date.now();
  const ms = await Promise.race([closed.then(() => Date.now() - start), new Promise<number>((r) => setTimeout(() => r(-1), WITHIN_MS))]);
  socket.destroy();
  return ms;
}

/** An HTTP/2 frame: 24-bit length, type, flags, stream id, payload. */
function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const SETTINGS = frame(0x4, 0, 0, Buffer.alloc(0));
/** HEADERS on stream 1 with END_STREAM but not END_HEADERS: `:method GET`, `:scheme https`, `:path /` (HPACK static indexes). */
const HALF_HEADERS = frame(0x1, 0x1, 1, Buffer.from([0x82, 0x87, 0x84]));
/** `GET /` whole (END_STREAM, END_HEADERS), with `:authority 127.0.0.1` (literal, indexed name) and no credentials. */
const ANONYMOUS_GET = frame(0x1, 0x5, 1, Buffer.concat([Buffer.from([0x82, 0x87, 0x84, 0x01, 0x09]), Buffer.from('127.0.0.1')]));
const PING = frame(0x6, 0, 0, Buffer.alloc(8));

/**
 * Whether the server let go of a connection it ended, whose client keeps its own side open (TCP
 * half-close): once the server's descriptor is closed, the client's next writes are refused
 * (ECONNRESET, EPIPE); while the server still holds it, they are read and nothing happens.
 */
async function releasedWithin({ socket, ready }: { socket: Socket; ready: Promise<unknown> }): Promise<boolean> {
  socket.on('data', () => undefined);
  let released = false;
  socket.on('error', () => (released = true)).once('close', () => (released = true));
  // Listened for at once: the answer may come before the request's write is reported done.
  const ended = new Promise((resolve) => socket.once('end', resolve));
  await ready;
  await ended;
  const deadline = Date.now() + WITHIN_MS;
  while (!released && Date.now() < deadline) {
    socket.write(PING);
    await sleep(100);
  }
  socket.destroy();
  return released;
}

/** An HTTP/2 connection that sends `sent` and keeps its TCP side open after the server's FIN (allowHalfOpen). */
function halfOpenH2(port: number, ca: string, sent: Buffer): { socket: Socket; ready: Promise<unknown> } {
  const tcp = tcpConnect({ host: '127.0.0.1', port, allowHalfOpen: true });
  const socket = tlsConnect({ socket: tcp, host: '127.0.0.1', ca, ALPNProtocols: ['h2'] });
  return { socket, ready: new Promise((resolve) => socket.once('secureConnect', () => socket.write(sent, resolve))) };
}

describe.each([0, 1])('with %i TLS front threads', (fronts) => {
  let s: TestServer;
  const port = (): number => Number(new URL(s.url).port);
  beforeAll(async () => {
    const authenticator = staticTokenAuthenticator(new Map([['t', ADMIN_USER]]));
    s = await startTestServer({ authenticator, serving: { tlsFrontWorkers: fronts, headersTimeoutMs: HEADERS_TIMEOUT_MS, idleTimeoutMs: IDLE_TIMEOUT_MS } });
  });
  afterAll(async () => {
    await s.close();
  });

  it('closes a connection whose TLS handshake started and never finished', async () => {
    const socket = tcpConnect({ host: '127.0.0.1', port: port() });
    // A TLS record header announcing a 512-byte ClientHello, and its first bytes only.
    const ready = new Promise((resolve) => socket.once('connect', () => socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), resolve)));
    const ms = await closedWithin(socket, ready);
    expect(ms).toBeGreaterThanOrEqual(0);
  }, 15_000);

  it('closes an idle HTTP/2 connection whose request stopped halfway through its headers', async () => {
    const socket = tlsConnect({ host: '127.0.0.1', port: port(), ca: s.caPem, ALPNProtocols: ['h2'] });
    const ready = new Promise((resolve) =>
      socket.once('secureConnect', () => {
        expect(socket.alpnProtocol).toBe('h2');
        socket.write(Buffer.concat([PREFACE, SETTINGS, HALF_HEADERS]), resolve);
      }),
    );
    const ms = await closedWithin(socket, ready);
    expect(ms).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 50);
  }, 15_000);

  it('lets go of an HTTP/2 connection whose client never ends its side, after the idle timeout', async () => {
    expect(await releasedWithin(halfOpenH2(port(), s.caPem, Buffer.concat([PREFACE, SETTINGS])))).toBe(true);
  }, 15_000);
});

describe.each([0, 1])('with %i TLS front threads and the default idle timeout', (fronts) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ authenticator: staticTokenAuthenticator(new Map()), serving: { tlsFrontWorkers: fronts, headersTimeoutMs: HEADERS_TIMEOUT_MS } });
  });
  afterAll(async () => {
    await s.close();
  });

  it('closes an HTTP/2 connection that never sends its preface within the header timeout', async () => {
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(new URL(s.url).port), ca: s.caPem, ALPNProtocols: ['h2'] });
    const ready = new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    expect(await closedWithin(socket, ready)).toBeGreaterThanOrEqual(0);
  }, 15_000);

  it('lets go of an HTTP/2 connection whose client never ends its side, after the GOAWAY that follows an unauthenticated request', async () => {
    const sent = Buffer.concat([PREFACE, SETTINGS, ANONYMOUS_GET]);
    expect(await releasedWithin(halfOpenH2(Number(new URL(s.url).port), s.caPem, sent))).toBe(true);
  }, 15_000);
});
