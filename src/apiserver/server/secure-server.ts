/**
 * The secure port's listener, as kube-apiserver's: TLS with client certificates requested (checked
 * by the authenticator), ALPN `h2` and `http/1.1`, so a kubelet, kubectl or the controller
 * multiplexes its requests and watches on one connection; `--disable-http2-serving` leaves
 * HTTP/1.1 alone. Both protocols reach the same handler through node:http's request and response
 * types (node:http2's compatibility layer); src/apiserver/http/connection.ts answers what differs.
 *
 * TLS is done on this thread's own listener, or (`--tls-front-workers`) by front threads which hand
 * each connection over in plaintext (fronts.ts); either way secure-accept.ts accepts the connections
 * and admits them to TLS, and connection-serving.ts serves them.
 */
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import { createSecureServer as createHttp2SecureServer, createServer as createHttp2Server } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as TlsServer, SecureContextOptions, TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log/logger.js';
import { answerClientError, CLOSE_GRACE_MS, type CloseOptions, connectionServing, type ConnectionServing } from './connection-serving.js';
import { startFronts, type Fronts } from './fronts.js';
import { acceptForTls, type Accepting } from './secure-accept.js';

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
  /** How long an accepted connection may wait for its TLS handshake to start before it is closed unread (default 10 s, a client's handshake timeout; tests shorten it). */
  handshakeWaitMs?: number;
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
  /**
   * Stops taking new connections and drops the ones the kernel queued; those accepted are served
   * on until close(). Only this thread's own listener: TLS fronts stop theirs in close().
   */
  stopAccepting?(): void;
  /** Stops listening, lets the requests under way finish (GOAWAY on HTTP/2), ends every connection within a second (ConnectionServing.close). */
  close(opts?: CloseOptions): Promise<void>;
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
  const common = { ...tls, requestCert: true, rejectUnauthorized: false, handshakeTimeout: serving.tlsHandshakeTimeoutMs };
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
  // node:tls closes the socket of a handshake that failed, but not of one that timed out (it only reports it).
  server.on('tlsClientError', (err: Error, socket: TLSSocket) => {
    logger.debug({ err }, 'TLS handshake failed');
    socket.destroy();
  });
  // The server never listens itself (secure-accept.ts hands it its connections); node:http checks
  // its header and request timeouts from a timer it starts on 'listening'.
  server.emit('listening');
  let accepting: Accepting | undefined;
  return {
    async listen(host, port, backlog) {
      accepting = await acceptForTls(server, { host, port, backlog, exclusive: true, waitMs: opts.handshakeWaitMs });
      return accepting.port;
    },
    setSecureContext: (options) => server.setSecureContext(options),
    broken: new Promise<Error>(() => undefined),
    stopAccepting: () => void accepting?.close(),
    close: async (closeOpts) => {
      // (Stops node:http's timer; the server has no socket of its own to close.)
      server.close();
      // An acceptor's close completes once its connections have ended: an exiting process leaves them.
      const acceptorsClosed = accepting?.close();
      await serving.close(closeOpts);
      if (!closeOpts?.exiting) await acceptorsClosed;
    },
  };
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
        handshakeWaitMs: opts.handshakeWaitMs,
        handshakeTimeoutMs: serving.tlsHandshakeTimeoutMs,
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
    async close(closeOpts) {
      await Promise.all([serving.close(closeOpts), fronts?.close(CLOSE_GRACE_MS + 500)]);
      http1.close();
    },
  };
}
