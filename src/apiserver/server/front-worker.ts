/**
 * A TLS front (a worker thread started by fronts.ts): listens on the secure port beside its sibling
 * fronts (SO_REUSEPORT: the kernel spreads new connections over them), accepts and admits connections
 * to TLS as the main thread's own listener does (secure-accept.ts), does each handshake, and hands the
 * plaintext stream to the back, the store-owning thread, over its private unix socket, preceded by
 * the preamble (front-preamble.ts). Everything HTTP is the
 * back's: this thread only accepts, handshakes, encrypts and decrypts.
 *
 * It keeps one connection to each back socket open ahead (connected, the secret sent), and a
 * handshaken connection takes one: the back has accepted it already, so its first request costs the
 * back one loop turn, as on an established connection, not an accept (sixteen per turn) and then a
 * read; nor does it wait here for libuv to report a new connect, a turn of this loop later
 * (docs/performance-history.md, session 14).
 */
import { connect, type Socket } from 'node:net';
import { createServer, type SecureContextOptions, type TLSSocket } from 'node:tls';
import { parentPort, workerData } from 'node:worker_threads';
import { peerChain } from '../http/connection.js';
import { encodeConnection } from './front-preamble.js';
import { acceptForTls, type Accepting } from './secure-accept.js';

export interface FrontWorkerData {
  /** The secure context's options (certificate, key, client CAs, versions, suites). */
  context: SecureContextOptions;
  /** ALPN protocols offered, in order. */
  alpnProtocols: string[];
  /** Shared by every front, so a TLS 1.3 ticket one issued resumes at another. */
  ticketKeys: Buffer;
  host: string;
  port: number;
  /** Whether to check the port is no other server's first (the first front), or join a sibling's. */
  exclusive: boolean;
  backlog: number;
  /** How long an accepted connection may wait for its handshake to start (secure-accept.ts). */
  handshakeWaitMs?: number;
  /** How long a started TLS handshake may take (connection-serving.ts). */
  handshakeTimeoutMs: number;
  /** The back's unix sockets (connections are spread over them) and the secret that proves a connection to one comes from a front. */
  backPaths: string[];
  secret: Buffer;
}

/** From the back: a new serving pair, or stop listening (the connections under way go on). */
export type ToFrontMessage = { type: 'context'; context: SecureContextOptions } | { type: 'close' };
/**
 * To the back: the port it listens on, or why it could not listen; connections it closed because it
 * could not reach the back (by error code, at most one message per second).
 */
export type FromFrontMessage = { type: 'listening'; port: number } | { type: 'listen-error'; code?: string; message: string } | { type: 'relay-failures'; failures: Record<string, number> };

const data = workerData as FrontWorkerData;
const port = parentPort!;
// Buffers arrive as plain Uint8Arrays.
const secret = Buffer.from(data.secret);

const server = createServer({
  ...data.context,
  ALPNProtocols: data.alpnProtocols,
  ticketKeys: Buffer.from(data.ticketKeys),
  requestCert: true,
  rejectUnauthorized: false,
  handshakeTimeout: data.handshakeTimeoutMs,
  // Each direction ends on its own, as node:http's server allows: the back decides when a connection is done.
  allowHalfOpen: true,
  // As node:http's and node:http2's servers: with Nagle's algorithm, HTTP/2's small frames waited for
  // the client's delayed ACK (16 streams of GETs ran 7x slower than without a front).
  noDelay: true,
});

/** Connections that could not reach the back since the last report, by error code. */
let failures: Record<string, number> | undefined;
const relayFailed = (err: NodeJS.ErrnoException): void => {
  if (!failures) {
    failures = {};
    setTimeout(() => {
      port.postMessage({ type: 'relay-failures', failures: failures! } satisfies FromFrontMessage);
      failures = undefined;
    }, 1000).unref();
  }
  const code = err.code ?? 'unknown';
  failures[code] = (failures[code] ?? 0) + 1;
};

/** The back socket the next connection goes to: each in turn (the back accepts one per socket per loop turn). */
let next = Math.floor(Math.random() * data.backPaths.length);

const dialBack = (): Socket => {
  const back = connect({ path: data.backPaths[next]!, allowHalfOpen: true });
  next = (next + 1) % data.backPaths.length;
  back.setNoDelay(true);
  return back;
};

/** Connected connections to the back, each with the listener to remove when it is taken. */
const spares = new Map<Socket, () => void>();
let dialing = 0;
let closing = false;
/** Opens connections to the back until as many as it has sockets are open or on their way. */
const topUpSpares = (): void => {
  while (!closing && spares.size + dialing < data.backPaths.length) {
    const back = dialBack();
    dialing++;
    back.write(secret);
    const onClose = (): void => void spares.delete(back);
    back.once('connect', () => {
      dialing--;
      if (closing) back.destroy();
      else spares.set(back, () => back.off('close', onClose).off('error', onError));
    });
    // One that cannot connect is counted, and not dialled again before the next handshake.
    const onError = (err: NodeJS.ErrnoException): void => {
      if (!spares.has(back)) dialing--;
      relayFailed(err);
    };
    back.once('error', onError).once('close', onClose);
  }
};

/** A connection to the back: a spare if one is open (then `connected`), else a new one. */
const takeBack = (): { back: Socket; connected: boolean } => {
  for (const [back, detach] of spares) {
    spares.delete(back);
    detach();
    topUpSpares();
    return { back, connected: true };
  }
  topUpSpares();
  const back = dialBack();
  back.write(secret);
  return { back, connected: false };
};

server.on('secureConnection', (tls: TLSSocket) => {
  tls.disableRenegotiation();
  const taken = takeBack();
  const back = taken.back;
  let connected = taken.connected;
  const protocol = tls.alpnProtocol || 'http/1.1';
  back.write(encodeConnection({ chain: peerChain(tls), remoteAddress: tls.remoteAddress, remotePort: tls.remotePort, protocol }));
  tls.pipe(back);
  back.pipe(tls);
  // The back closing a connection (idle timeout, GOAWAY, close()) ends it once its last bytes are out;
  // the client going away ends the back's side at once.
  back.once('close', () => tls.destroySoon());
  tls.once('close', () => back.destroy());
  if (!connected) back.once('connect', () => (connected = true));
  back.on('error', (err: NodeJS.ErrnoException) => {
    if (!connected) relayFailed(err);
    tls.destroy();
  });
  tls.on('error', () => back.destroy());
});
// A handshake that fails is the client's problem. node:tls closes the socket of one that failed,
// but not of one that timed out (handshakeTimeout only reports it): both end here.
server.on('tlsClientError', (_err: Error, tls: TLSSocket) => tls.destroy());

let accepting: Accepting | undefined;
port.on('message', (m: ToFrontMessage) => {
  if (m.type === 'context') server.setSecureContext(m.context);
  else {
    // (The connections under way keep this thread alive until they end; the spares would too.)
    closing = true;
    for (const back of spares.keys()) back.destroy();
    void accepting?.close().then(() => port.close());
  }
});

acceptForTls(server, { host: data.host, port: data.port, backlog: data.backlog, exclusive: data.exclusive, waitMs: data.handshakeWaitMs }).then(
  (a) => {
    accepting = a;
    topUpSpares();
    port.postMessage({ type: 'listening', port: a.port } satisfies FromFrontMessage);
  },
  (err: NodeJS.ErrnoException) => port.postMessage({ type: 'listen-error', code: err.code, message: err.message } satisfies FromFrontMessage),
);
