/**
 * The secure port's listener, as kube-apiserver's: TLS with client certificates requested (checked
 * by the authenticator), ALPN `h2` and `http/1.1`, so a kubelet, kubectl or the controller
 * multiplexes its requests and watches on one connection; `--disable-http2-serving` leaves
 * HTTP/1.1 alone. Both protocols reach the same handler through node:http's request and response
 * types (node:http2's compatibility layer); src/apiserver/http/connection.ts answers what differs.
 *
 * HTTP/2 limits, after what kube-apiserver and Go's HTTP/2 server do since the rapid-reset attacks
 * (CVE-2023-44487, CVE-2023-39325): at most `--http2-max-streams-per-connection` streams (100 for 0,
 * kube-apiserver's own choice), and at most that many handlers running per connection, since a
 * reset stream's work goes on: further requests wait, and a connection with more than four times
 * that many waiting is closed (ENHANCE_YOUR_CALM). Headers are limited to 1 MiB as on HTTP/1.1.
 */
import { createServer as createHttpsServer } from 'node:https';
import { constants, createSecureServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as TlsServer, SecureContextOptions, TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log/logger.js';
import { closeConnectionAfter, isHttp2 } from '../http/connection.js';

export interface SecureServingOptions {
  /** --disable-http2-serving: offer only http/1.1 in ALPN. */
  disableHttp2?: boolean;
  /** --http2-max-streams-per-connection; 0 or absent: 100, the limit kube-apiserver gives Go's default. */
  http2MaxStreamsPerConnection?: number;
  /** --goaway-chance: the fraction of HTTP/2 requests after which the connection is closed (GOAWAY), 0 to 0.02. */
  goawayChance?: number;
  /** How long a connection without requests stays open (default 90 s, kube-apiserver's; tests shorten it). */
  idleTimeoutMs?: number;
  /** How long a request may take to arrive whole (default 300 s, node:http's requestTimeout; tests shorten it). */
  requestTimeoutMs?: number;
}

/** Serves one request; settles once its work is done (never rejects). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface SecureServer {
  server: TlsServer;
  /** Stops listening, lets the requests under way finish (GOAWAY on HTTP/2), ends every connection within a second. */
  close(): Promise<void>;
}

/** kube-apiserver's MaxHeaderBytes (1 MiB): Node's 16 KiB default refused long bearer tokens. */
const MAX_HEADER_BYTES = 1 << 20;

/** Go's HTTP/2 client's initial limit, which kube-apiserver serves when the flag is 0. */
export const DEFAULT_HTTP2_MAX_STREAMS = 100;

/**
 * kube-apiserver's: idle connections stay 90 s (Go's http.DefaultTransport keeps them as long; Go's
 * server applies the same to an HTTP/2 connection without streams), request headers must arrive
 * within 32 s. With Node's 5 s idle default, clients paid a new TLS handshake after any longer pause.
 */
const IDLE_TIMEOUT_MS = 90_000;
const HEADERS_TIMEOUT_MS = 32_000;
/** node:http's requestTimeout, which ends an HTTP/1.1 request that has not arrived whole by then. */
const REQUEST_TIMEOUT_MS = 300_000;

/** After close(), connections still busy are ended this much later. */
const CLOSE_GRACE_MS = 1000;

/**
 * A request the HTTP/1.1 parser refused still gets an answer, worded as Go's net/http words it (431
 * for headers past the limit, 400 otherwise), unless the peer is already gone.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status}`);
}

/**
 * A body the handler left unread (a 413 answered from Content-Length) is drained; a client still
 * sending one once the response is out is told to stop, as RFC 9113 §8.1 allows and Go's server
 * does (RST_STREAM NO_ERROR), instead of the stream staying open and holding a slot. A client that
 * sent its whole request must get no reset: Go's client then fails the response it has not read.
 */
function endUnreadBody(req: Http2Request): void {
  const stream = req.stream;
  if (stream.closed || stream.endAfterHeaders || req.readableEnded) return;
  req.resume();
  // Data already received ends the body within this turn's ticks; what is still in flight does not.
  setImmediate(() => {
    if (!req.readableEnded && !stream.closed) stream.close(constants.NGHTTP2_NO_ERROR);
  });
}

/**
 * A request body still arriving after the request timeout resets its stream (CANCEL), as HTTP/1.1's
 * requestTimeout ends its connection: a client trickling a body cannot hold a stream and its
 * handler for ever, and the connection's other streams go on.
 */
function resetSlowBody(req: Http2Request, timeoutMs: number): void {
  const stream = req.stream;
  if (stream.endAfterHeaders) return;
  const timer = setTimeout(() => {
    if (!stream.closed && stream.state.remoteClose !== 1) stream.close(constants.NGHTTP2_CANCEL);
  }, timeoutMs).unref();
  stream.once('close', () => clearTimeout(timer));
}

/** node:http2's compatibility request, which the handlers take for node:http's. */
type Http2Request = IncomingMessage & Http2ServerRequest;

/** Requests of one HTTP/2 connection: how many handlers run, and the ones waiting for a turn. */
interface SessionWork {
  running: number;
  waiting: [Http2Request, ServerResponse][];
}

export function createSecureServer(tls: SecureContextOptions, opts: SecureServingOptions, logger: Logger, handle: RequestHandler): SecureServer {
  const maxStreams = opts.http2MaxStreamsPerConnection || DEFAULT_HTTP2_MAX_STREAMS;
  const goawayChance = opts.goawayChance ?? 0;
  const idleTimeoutMs = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  const requestTimeoutMs = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const work = new WeakMap<Http2Session, SessionWork>();
  /** HTTP/1.1 connections, with the number of requests each is serving (0: idle). */
  const http1 = new Map<TLSSocket, number>();
  const sessions = new Set<Http2Session>();
  /** Every TLS connection of either protocol, for the end of close(). */
  const sockets = new Set<TLSSocket>();
  let closing = false;

  const serveHttp1 = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket as TLSSocket;
    http1.set(socket, (http1.get(socket) ?? 0) + 1);
    if (closing) closeConnectionAfter(req, res);
    res.once('close', () => {
      const left = (http1.get(socket) ?? 1) - 1;
      if (http1.has(socket)) http1.set(socket, left);
      if (closing && left === 0) socket.destroySoon();
    });
    void handle(req, res).catch((err: unknown) => logger.error({ err }, 'bug: a request handler failed'));
  };

  const run = (state: SessionWork, req: Http2Request, res: ServerResponse): void => {
    state.running++;
    void handle(req, res)
      .catch((err: unknown) => logger.error({ err }, 'bug: a request handler failed'))
      .then(() => {
        state.running--;
        endUnreadBody(req);
        while (state.running < maxStreams && state.waiting.length > 0) {
          const [nextReq, nextRes] = state.waiting.shift()!;
          // A stream reset while it waited needs no work.
          if (!nextReq.stream.closed) run(state, nextReq, nextRes);
        }
      });
  };

  const serveHttp2 = (req: Http2Request, res: ServerResponse): void => {
    const session = req.stream.session;
    if (!session) return;
    resetSlowBody(req, requestTimeoutMs);
    let state = work.get(session);
    if (!state) work.set(session, (state = { running: 0, waiting: [] }));
    // --goaway-chance: upstream decides before the handler, for any request, watches included.
    if (goawayChance > 0 && Math.random() < goawayChance) closeConnectionAfter(req, res);
    if (state.running < maxStreams) {
      run(state, req, res);
      return;
    }
    // Only streams reset while their handlers still run can get here: the client never has more
    // than maxStreams open. Too many of them is the rapid-reset attack.
    if (state.waiting.length >= 4 * maxStreams) {
      logger.info({ remoteAddress: session.socket?.remoteAddress }, 'closing an HTTP/2 connection that reset too many streams under way');
      state.waiting = [];
      // (destroy(err, code) sends its GOAWAY with NO_ERROR, or not at all from inside a request.)
      session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
      session.close();
      setTimeout(() => session.destroy(), CLOSE_GRACE_MS).unref();
      return;
    }
    state.waiting.push([req, res]);
  };

  const request = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void => {
    // The compatibility request and response are what node:http's are to every handler.
    const httpReq = req as IncomingMessage;
    const httpRes = res as ServerResponse;
    if (isHttp2(httpReq)) serveHttp2(httpReq, httpRes);
    else serveHttp1(httpReq, httpRes);
  };

  const common = { ...tls, requestCert: true, rejectUnauthorized: false };
  let server: TlsServer;
  if (opts.disableHttp2) {
    server = createHttpsServer(
      { ...common, keepAliveTimeout: idleTimeoutMs, headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: requestTimeoutMs, maxHeaderSize: MAX_HEADER_BYTES },
      request as (req: IncomingMessage, res: ServerResponse) => void,
    );
  } else {
    const h2 = createHttp2Server(
      {
        ...common,
        allowHTTP1: true,
        // kube-apiserver's frame size (256 KiB, most objects in one frame): nghttp2 accepts at most 8
        // CONTINUATION frames after HEADERS, so 1 MiB of headers needs frames this large.
        settings: { maxConcurrentStreams: maxStreams, maxHeaderListSize: MAX_HEADER_BYTES, maxFrameSize: 256 * 1024, enablePush: false },
        // node:http's limit of header fields (maxHeadersCount) instead of HTTP/2's 128.
        maxHeaderListPairs: 2000,
        // A peer that keeps sending frames in error, or streams past the limit, is cut off.
        maxSessionInvalidFrames: 100,
        maxSessionRejectedStreams: 100,
        // Responses waiting to be sent count here: with Node's 10 MB, one 20 MB list refused every
        // other stream of its connection (ENHANCE_YOUR_CALM). HTTP/1.1 connections hold as much.
        maxSessionMemory: 1024,
      },
      request,
    );
    // The HTTP/1.1 side reads node:http's server settings from this server, not from the options.
    Object.assign(h2, { keepAliveTimeout: idleTimeoutMs, headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: requestTimeoutMs, maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: true });
    h2.on('session', (session: Http2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
      if (closing) session.close();
      let streams = 0;
      session.on('stream', (stream) => {
        streams++;
        stream.once('close', () => streams--);
      });
      // An idle connection (no stream) is closed after the idle timeout, as Go's server does; an open
      // watch with nothing to say keeps its connection. (A callback given to setTimeout runs once.)
      session.setTimeout(idleTimeoutMs);
      session.on('timeout', () => {
        if (streams === 0) session.close();
      });
    });
    h2.on('sessionError', (err: Error) => logger.debug({ err }, 'HTTP/2 connection error'));
    server = h2;
  }
  server.on('secureConnection', (socket: TLSSocket) => {
    socket.disableRenegotiation();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    logger.debug({ protocol: socket.alpnProtocol || 'http/1.1', remoteAddress: socket.remoteAddress }, 'TLS connection');
    if (socket.alpnProtocol === 'h2') return;
    http1.set(socket, 0);
    socket.once('close', () => http1.delete(socket));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    logger.debug({ err }, 'client connection error');
    answerClientError(err, socket);
  });

  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        for (const session of sessions) session.close();
        for (const [socket, busy] of http1) if (busy === 0) socket.destroySoon();
        setTimeout(() => {
          // A destroyed session still waits for its socket to flush; the server waits for the socket.
          for (const socket of sockets) socket.destroy();
        }, CLOSE_GRACE_MS).unref();
      }),
  };
}
