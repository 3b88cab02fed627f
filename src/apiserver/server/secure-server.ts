/**
 * The secure port's listener, as kube-apiserver's: TLS with client certificates requested (checked
 * by the authenticator), ALPN `h2` and `http/1.1`, so a kubelet, kubectl or the controller
 * multiplexes its requests and watches on one connection; `--disable-http2-serving` leaves
 * HTTP/1.1 alone. Both protocols reach the same handler through node:http's request and response
 * types (node:http2's compatibility layer); src/apiserver/http/connection.ts answers what differs.
 *
 * TLS is done on this thread's own listener, or (`--tls-front-workers`) by front threads which hand
 * each connection over in plaintext (fronts.ts); either way connection-serving.ts serves it.
 */
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import { createSecureServer as createHttp2SecureServer, createServer as createHttp2Server } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type ListenOptions, type Server as NetServer } from 'node:net';
import type { Server as TlsServer, SecureContextOptions, TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log/logger.js';
import { answerClientError, CLOSE_GRACE_MS, connectionServing, type ConnectionServing } from './connection-serving.js';
import { startFronts, type Fronts } from './fronts.js';

export interface SecureServingOptions {
  /** --disable-http2-serving: offer only http/1.1 in ALPN. */
  disableHttp2?: boolean;
  /** --http2-max-streams-per-connection; 0 or absent: 100, the limit kube-apiserver gives Go's default. */
  http2MaxStreamsPerConnection?: number;
  /** --goaway-chance: the fraction of HTTP/2 requests after which the connection is closed (GOAWAY), 0 to 0.02. */
  goawayChance?: number;
  /** How long a connection without requests stays open (default 90 s, kube-apiserver's; tests shorten it). */
  idleTimeoutMs?: number;
  /** How long an HTTP/1.1 request's headers may take to arrive (default 32 s, kube-apiserver's ReadHeaderTimeout; tests shorten it). */
  headersTimeoutMs?: number;
  /** How long a request may take to arrive whole (default 300 s, node:http's requestTimeout; tests shorten it). */
  requestTimeoutMs?: number;
  /** --tls-front-workers: threads that accept and do TLS for this one (0 or absent: it does both itself). */
  tlsFrontWorkers?: number;
}

/** Serves one request; settles once its work is done (never rejects). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface SecureServer {
  /** Starts accepting connections; resolves with the port. */
  listen(host: string, port: number, backlog: number): Promise<number>;
  /** Serves a new certificate pair from now on. */
  setSecureContext(options: SecureContextOptions): void;
  /** Settles (never rejects) if the server can no longer accept connections: a front thread ended. */
  broken: Promise<Error>;
  /** Stops listening, lets the requests under way finish (GOAWAY on HTTP/2), ends every connection within a second. */
  close(): Promise<void>;
}

export function createSecureServer(tls: SecureContextOptions, opts: SecureServingOptions, logger: Logger, handle: RequestHandler): SecureServer {
  const serving = connectionServing(opts, logger, handle);
  return opts.tlsFrontWorkers ? frontedServer(tls, opts, logger, serving) : ownTlsServer(tls, opts, logger, serving);
}

const onClientError = (logger: Logger) => (err: NodeJS.ErrnoException, socket: Duplex) => {
  logger.debug({ err }, 'client connection error');
  answerClientError(err, socket);
};

/** This thread accepts and handshakes. */
function ownTlsServer(tls: SecureContextOptions, opts: SecureServingOptions, logger: Logger, serving: ConnectionServing): SecureServer {
  const common = { ...tls, requestCert: true, rejectUnauthorized: false };
  let server: TlsServer;
  if (opts.disableHttp2) {
    server = createHttpsServer({ ...common, ...serving.http1Settings }, serving.request);
  } else {
    const h2 = createHttp2SecureServer({ ...common, ...serving.http2Options, allowHTTP1: true }, serving.request);
    // The HTTP/1.1 side reads node:http's server settings from this server, not from the options.
    Object.assign(h2, { ...serving.http1Settings, requireHostHeader: true });
    h2.on('session', serving.session);
    h2.on('sessionError', (err: Error) => logger.debug({ err }, 'HTTP/2 connection error'));
    server = h2;
  }
  server.on('secureConnection', (socket: TLSSocket) => {
    socket.disableRenegotiation();
    const protocol = socket.alpnProtocol || 'http/1.1';
    logger.debug({ protocol, remoteAddress: socket.remoteAddress }, 'TLS connection');
    serving.connection(socket, protocol);
  });
  server.on('clientError', onClientError(logger));
  let acceptors: NetServer[] = [];
  return {
    async listen(host, port, backlog) {
      const bound = await freePort(host, port);
      await listenOn(server, { port: bound, host, backlog, reusePort: true });
      // The others hand what they accept to the TLS server, as its own listening socket does.
      const { noDelay, keepAlive, keepAliveInitialDelay, highWaterMark } = server as TlsServer & NetSocketDefaults;
      acceptors = Array.from({ length: ACCEPTORS - 1 }, () =>
        createNetServer({ noDelay, keepAlive, keepAliveInitialDelay, highWaterMark }, (socket) => server.emit('connection', socket)),
      );
      try {
        await Promise.all(acceptors.map((a) => listenOn(a, { port: bound, host, backlog, reusePort: true })));
      } catch (err) {
        for (const s of [server, ...acceptors]) if (s.listening) s.close();
        throw err;
      }
      return bound;
    },
    setSecureContext: (options) => server.setSecureContext(options),
    broken: new Promise<Error>(() => undefined),
    close: async () => {
      const closed = (s: NetServer): Promise<void> => new Promise<void>((resolve) => s.close(() => resolve()));
      await Promise.all([closed(server), ...acceptors.map(closed), serving.close()]);
    },
  };
}

/**
 * Listening sockets the secure port accepts on, bound together with SO_REUSEPORT (the kernel spreads
 * new connections over them). libuv accepts one connection per listening socket per event-loop turn
 * (libuv#3696, in Node since libuv 1.45), and under a join storm this loop's turns take tens of
 * milliseconds: connections waited in the kernel's accept queue, 700 of them for 10 s at 1,000 nodes
 * while the loop turned at least every 0.6 s, until the kubelets' 10 s handshake timeout gave up on
 * them. Go's server accepts as fast as connections come (a goroutine blocked in accept); N sockets
 * take N per turn. (What the kernel's queue also did was admit no more handshakes than the loop could
 * finish: on an overloaded host a cap on handshakes in progress is still missing, docs/performance.md.)
 */
const ACCEPTORS = 16;

/** The options node:net copies from a server onto each socket it accepts. */
interface NetSocketDefaults {
  noDelay: boolean;
  keepAlive: boolean;
  keepAliveInitialDelay: number;
  highWaterMark: number;
}

function listenOn(server: NetServer, options: ListenOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * The port to bind (a free one for 0), checked free with a listener that shares nothing: the
 * acceptors' SO_REUSEPORT must not let a second server on the same port start and split the
 * connections with this one (upstream's --permit-port-sharing is off by default); it fails with
 * EADDRINUSE as before. A port the probe found free is bound again at once.
 */
async function freePort(host: string, port: number): Promise<number> {
  const probe = createNetServer();
  await listenOn(probe, { port, host });
  const bound = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return bound;
}

/**
 * Front threads accept and handshake; this thread serves the plaintext they hand over with node:http
 * and node:http2 servers that never listen themselves (h2 with prior knowledge, ALPN having chosen).
 */
function frontedServer(tls: SecureContextOptions, opts: SecureServingOptions, logger: Logger, serving: ConnectionServing): SecureServer {
  const http1 = createHttpServer(serving.request);
  Object.assign(http1, { ...serving.http1Settings, requireHostHeader: true });
  // node:http checks headersTimeout and requestTimeout from a timer it starts on 'listening'.
  http1.emit('listening');
  http1.on('clientError', onClientError(logger));
  const http2 = opts.disableHttp2 ? undefined : createHttp2Server(serving.http2Options, serving.request);
  http2?.on('session', serving.session);
  http2?.on('sessionError', (err: Error) => logger.debug({ err }, 'HTTP/2 connection error'));
  let fronts: Fronts | undefined;
  let context = tls;
  let reportBroken: (err: Error) => void = () => undefined;
  const broken = new Promise<Error>((resolve) => (reportBroken = resolve));
  return {
    async listen(host, port, backlog) {
      fronts = await startFronts({
        workers: opts.tlsFrontWorkers!,
        context,
        alpnProtocols: http2 ? ['h2', 'http/1.1'] : ['http/1.1'],
        host,
        port,
        backlog,
        logger,
        serve(socket, connection) {
          logger.debug({ protocol: connection.protocol, remoteAddress: connection.remoteAddress }, 'TLS connection');
          serving.connection(socket, connection.protocol);
          if (connection.protocol === 'h2' && http2) {
            http2.emit('connection', socket);
            return;
          }
          // node:http ends a connection it answered with Connection: close (a body too large) by
          // destroying it once the answer is written. A unix socket destroyed with the client's bytes
          // unread is reset, and the front may then lose the answer before it has read it: end this
          // side instead, and the front closes the connection once it has the answer (front-worker.ts).
          socket.destroySoon = () => socket.end();
          http1.emit('connection', socket);
        },
      });
      void fronts.broken.then(reportBroken);
      return fronts.port;
    },
    setSecureContext(options) {
      context = options;
      fronts?.setSecureContext(options);
    },
    broken,
    async close() {
      await Promise.all([serving.close(), fronts?.close(CLOSE_GRACE_MS + 500)]);
      http1.close();
    },
  };
}
