/**
 * What the secure port does with a connection once its TLS is done, whichever thread did it: HTTP/1.1
 * or HTTP/2 to the one request handler, with the per-connection limits, and close() that ends every
 * connection within a second. secure-server.ts feeds it TLS sockets of its own listener or, with
 * front workers, the plaintext connections they hand over (fronts.ts).
 *
 * HTTP/2 limits, after what kube-apiserver and Go's HTTP/2 server do since the rapid-reset attacks
 * (CVE-2023-44487, CVE-2023-39325): at most `--http2-max-streams-per-connection` streams (100 for 0,
 * kube-apiserver's own choice), and at most that many handlers running per connection, since a
 * reset stream's work goes on: further requests wait, and a connection with more than four times
 * that many waiting is closed (ENHANCE_YOUR_CALM). Headers are limited to 1 MiB as on HTTP/1.1; a
 * longer HTTP/2 header list is answered 431 on its stream, as Go's server answers it.
 */
import { constants, type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type ServerOptions as Http2ServerOptions } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log/logger.js';
import { closeConnectionAfter, isHttp2 } from '../http/connection.js';
import type { RequestHandler, SecureServingOptions } from './secure-server.js';

/** kube-apiserver's MaxHeaderBytes (1 MiB): Node's 16 KiB default refused long bearer tokens. */
const MAX_HEADER_BYTES = 1 << 20;
/**
 * Go's HTTP/2 server counts a header list in HTTP/2's units (name, value and 32 octets per field),
 * allows MaxHeaderBytes plus ten fields' overhead, and answers a longer list 431 on its stream.
 */
const MAX_HEADER_LIST_SIZE = MAX_HEADER_BYTES + 10 * 32;
/**
 * nghttp2 refuses a stream whose list passes what this side advertises before any handler sees it
 * (RST_STREAM, no answer), so it advertises twice the limit: a list up to that is read, then
 * answered 431 as Go's server answers it. A longer one is still refused.
 */
const ADVERTISED_HEADER_LIST_SIZE = 2 * MAX_HEADER_LIST_SIZE;
/** Go's HTTP/2 answer to a header list too long. */
const HEADER_LIST_TOO_LONG = '<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>';

/** Go's HTTP/2 client's initial limit, which kube-apiserver serves when the flag is 0. */
export const DEFAULT_HTTP2_MAX_STREAMS = 100;

/**
 * kube-apiserver's: idle connections stay 90 s (Go's http.DefaultTransport keeps them as long; Go's
 * server applies the same to an HTTP/2 connection without streams), request headers must arrive
 * within 32 s. With Node's 5 s idle default, clients paid a new TLS handshake after any longer pause.
 */
const IDLE_TIMEOUT_MS = 90_000;
const HEADERS_TIMEOUT_MS = 32_000;
/**
 * node:http checks its header and request timeouts on a timer, every 30 s by default, so a header
 * timeout of 32 s could run to 62 s; checking at a quarter of the shorter keeps either within 25%.
 */
const CHECKS_PER_TIMEOUT = 4;
/** node:http's requestTimeout, which ends an HTTP/1.1 request that has not arrived whole by then. */
const REQUEST_TIMEOUT_MS = 300_000;

/** After close(), connections still busy are ended this much later. */
export const CLOSE_GRACE_MS = 1000;

/**
 * A request the HTTP/1.1 parser refused still gets an answer, worded as Go's net/http words it (431
 * for headers past the limit, 400 otherwise), unless the peer is already gone. A request that did
 * not arrive in time (headers or body) gets none, as Go's server answers no read that timed out; its
 * connection may be carrying a response already.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable) {
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

/** The request's header list in HTTP/2's units: each field's name and value plus 32 octets. */
function headerListSize(rawHeaders: string[]): number {
  let size = 0;
  for (const field of rawHeaders) size += field.length;
  return size + (rawHeaders.length / 2) * 32;
}

/** node:http2's compatibility request, which the handlers take for node:http's. */
type Http2Request = IncomingMessage & Http2ServerRequest;

/** Requests of one HTTP/2 connection: how many handlers run, and the ones waiting for a turn. */
interface SessionWork {
  running: number;
  waiting: [Http2Request, ServerResponse][];
}

/** How a close ends: `exiting` when the process exits right after it (see ConnectionServing.close). */
export interface CloseOptions {
  exiting?: boolean;
}

export interface ConnectionServing {
  /** The request listener of every server, HTTP/1.1 and HTTP/2 alike. */
  request: (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;
  /** node:http's server settings, for an HTTP/1.1 server (or the HTTP/1.1 side of an HTTP/2 one). */
  http1Settings: { keepAliveTimeout: number; headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number; maxHeaderSize: number };
  /** node:http2's server options. */
  http2Options: Http2ServerOptions;
  /**
   * How long a TLS handshake may take once started: Go's server allows the shortest of its read
   * timeouts, kube-apiserver's ReadHeaderTimeout (32 s), where node:tls allows 120 s.
   */
  tlsHandshakeTimeoutMs: number;
  /** Registers a new connection once its protocol is known (ALPN): kept for close(). */
  connection(socket: Socket, protocol: string): void;
  /** Registers a new HTTP/2 session: idle timeout, GOAWAY on close(). */
  session(session: Http2Session): void;
  /**
   * Lets the requests under way finish (GOAWAY on HTTP/2) and ends every connection a second later;
   * resolves once all are gone. `exiting`: the process exits next, so what is still open at the grace
   * is left for the exit to end, sparing this thread ending thousands one by one (seconds).
   */
  close(opts?: CloseOptions): Promise<void>;
}

export function connectionServing(opts: SecureServingOptions, logger: Logger, handle: RequestHandler): ConnectionServing {
  const maxStreams = opts.http2MaxStreamsPerConnection || DEFAULT_HTTP2_MAX_STREAMS;
  const goawayChance = opts.goawayChance ?? 0;
  const idleTimeoutMs = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  const requestTimeoutMs = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const headersTimeoutMs = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const work = new WeakMap<Http2Session, SessionWork>();
  /** HTTP/1.1 connections, with the number of requests each is serving (0: idle). */
  const http1 = new Map<Socket, number>();
  const sessions = new Set<Http2Session>();
  /** Every connection of either protocol, for the end of close(). */
  const sockets = new Set<Socket>();
  let closing = false;
  let allClosed: (() => void) | undefined;

  /** Pipelined HTTP/1.1 requests waiting for the one their connection is serving. */
  const pipelined = new WeakMap<Socket, [IncomingMessage, ServerResponse][]>();

  const runHttp1 = (req: IncomingMessage, res: ServerResponse): void => {
    void handle(req, res).catch((err: unknown) => logger.error({ err }, 'bug: a request handler failed'));
  };

  /**
   * One request of a connection at a time, as Go's server reads the next request only once it has
   * answered the last. node:http hands every pipelined request over at once: a client that sent
   * thousands and read nothing took every flow-control seat, and, once node:http had paused the
   * connection, kept them after it left, since a paused socket never sees its peer go.
   */
  const serveHttp1 = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket;
    const busy = http1.get(socket) ?? 0;
    http1.set(socket, busy + 1);
    if (closing) closeConnectionAfter(req, res);
    res.once('close', () => {
      const left = (http1.get(socket) ?? 1) - 1;
      if (http1.has(socket)) http1.set(socket, left);
      if (closing && left === 0) socket.destroySoon();
      const next = socket.destroyed ? undefined : pipelined.get(socket)?.shift();
      if (next) runHttp1(...next);
    });
    if (busy === 0) return runHttp1(req, res);
    let waiting = pipelined.get(socket);
    if (!waiting) pipelined.set(socket, (waiting = []));
    // As many as an HTTP/2 connection may have waiting (see serveHttp2); past that, the client is cut off.
    if (waiting.length >= 4 * maxStreams) {
      logger.info({ remoteAddress: socket.remoteAddress }, 'closing an HTTP/1.1 connection that pipelined too many requests');
      pipelined.delete(socket);
      socket.destroy();
      return;
    }
    waiting.push([req, res]);
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
    if (headerListSize(req.rawHeaders) > MAX_HEADER_LIST_SIZE) {
      res.writeHead(431, { 'content-type': 'text/html; charset=utf-8' });
      res.end(HEADER_LIST_TOO_LONG);
      endUnreadBody(req);
      return;
    }
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

  return {
    request(req, res) {
      // The compatibility request and response are what node:http's are to every handler.
      const httpReq = req as IncomingMessage;
      const httpRes = res as ServerResponse;
      if (isHttp2(httpReq)) serveHttp2(httpReq, httpRes);
      else serveHttp1(httpReq, httpRes);
    },
    http1Settings: {
      keepAliveTimeout: idleTimeoutMs,
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(headersTimeoutMs, requestTimeoutMs) / CHECKS_PER_TIMEOUT,
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    http2Options: {
      // kube-apiserver's frame size (256 KiB, most objects in one frame): nghttp2 accepts at most 8
      // CONTINUATION frames after HEADERS, so 1 MiB of headers needs frames this large.
      settings: { maxConcurrentStreams: maxStreams, maxHeaderListSize: ADVERTISED_HEADER_LIST_SIZE, maxFrameSize: 256 * 1024, enablePush: false },
      // node:http's limit of header fields (maxHeadersCount) instead of HTTP/2's 128.
      maxHeaderListPairs: 2000,
      // A peer that keeps sending frames in error, or streams past the limit, is cut off.
      maxSessionInvalidFrames: 100,
      maxSessionRejectedStreams: 100,
      // Responses waiting to be sent count here: with Node's 10 MB, one 20 MB list refused every
      // other stream of its connection (ENHANCE_YOUR_CALM). HTTP/1.1 connections hold as much.
      maxSessionMemory: 1024,
    },
    tlsHandshakeTimeoutMs: headersTimeoutMs,
    connection(socket, protocol) {
      sockets.add(socket);
      socket.once('close', () => {
        sockets.delete(socket);
        if (sockets.size === 0) allClosed?.();
      });
      if (protocol === 'h2') return;
      http1.set(socket, 0);
      socket.once('close', () => http1.delete(socket));
      if (closing) socket.destroySoon();
    },
    session(session) {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
      // A closed session (GOAWAY after an unauthenticated request, idle timeout, ENHANCE_YOUR_CALM)
      // ends its socket and node:http2 then waits for the peer to end its side: a peer that never
      // does held the connection, its descriptor and memory for ever. Go's server closes the
      // connection outright once its GOAWAY is out; here, a grace after this side ended.
      session.once('connect', (_session, socket) => {
        socket.once('finish', () => setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref());
      });
      // A client sends its SETTINGS right after the preface. One that has sent neither within the
      // header timeout is cut off, as Go's server bounds its wait for the preface and as an HTTP/1.1
      // connection without a request is; node:http2 would wait for the idle timeout.
      const preface = setTimeout(() => session.destroy(), headersTimeoutMs).unref();
      session.once('remoteSettings', () => clearTimeout(preface));
      session.once('close', () => clearTimeout(preface));
      if (closing) session.close();
      let streams = 0;
      session.on('stream', (stream) => {
        streams++;
        stream.once('close', () => streams--);
      });
      // An idle connection (no stream) is closed after the idle timeout, as Go's server does; an open
      // watch with nothing to say keeps its connection. (A callback given to setTimeout runs once.)
      // A header block left half sent (HEADERS without its END_HEADERS) is no stream yet, and holds
      // close() open for as long as the peer likes: it is ended a second later, as Go's server ends
      // a connection without open streams once its GOAWAY is out.
      session.setTimeout(idleTimeoutMs);
      session.on('timeout', () => {
        if (streams > 0) return;
        session.close();
        setTimeout(() => session.destroy(), CLOSE_GRACE_MS).unref();
      });
    },
    close: (closeOpts) =>
      new Promise<void>((resolve) => {
        closing = true;
        allClosed = resolve;
        if (sockets.size === 0) resolve();
        for (const session of sessions) session.close();
        for (const [socket, busy] of http1) if (busy === 0) socket.destroySoon();
        setTimeout(() => {
          if (closeOpts?.exiting) return resolve();
          // A destroyed session still waits for its socket to flush; the server waits for the socket.
          for (const socket of sockets) socket.destroy();
        }, CLOSE_GRACE_MS).unref();
      }),
  };
}
