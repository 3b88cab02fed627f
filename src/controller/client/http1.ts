/**
 * The controller's HTTP/1.1 client: keep-alive connections on node:tls (node:net for http://), one
 * socket write per request (head and body in one TLS record) and a response reader that hands each
 * body chunk on as it arrives, collected for a reply read in full or to a sink (a watch). undici did
 * the same through its handler objects, its wasm parser and several layers per chunk; this client
 * spends a quarter to a third less CPU per request, which the API server, sharing the cores, gets
 * (docs/performance-history.md, "The controller's HTTP client"). node:http2 saved the client less and cost
 * the server more per request, so the controller speaks HTTP/1.1 to every server, as client-go does
 * with DISABLE_HTTP2; a watch holds a connection of its own.
 */
import net from 'node:net';
import tls from 'node:tls';
import { abortError, Exchange, type BodySink, type Http1Request, type Reply } from './http1-exchange.js';
import { bodyLength, IDLE_MS, idleMsFor, parseHead } from './http1-head.js';

export type { BodySink, Http1Request, Reply } from './http1-exchange.js';

/** Where connections go: the origin and, for https, the TLS options of every connection. */
export interface Http1Target {
  url: URL;
  tls: tls.ConnectionOptions;
}

/** A response head larger than this is refused (Go's http.Transport allows 1 MiB). */
const MAX_HEAD_BYTES = 1 << 20;
const CRLF2 = Buffer.from('\r\n\r\n');

const enum Mode {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailers,
  UntilClose,
}

class Connection {
  readonly socket: net.Socket;
  /** It has served a request before (a failure before any reply byte may be the server's idle close). */
  reused = false;
  private ex: Exchange | undefined;
  private mode = Mode.Head;
  private remaining = 0;
  private pending: Buffer | undefined;
  private keepAlive = true;
  private idleMs = IDLE_MS;
  private idleTimer: NodeJS.Timeout | undefined;
  private error: Error | undefined;

  constructor(
    target: Http1Target,
    private readonly pool: Http1Pool,
  ) {
    const port = Number(target.url.port) || (target.url.protocol === 'https:' ? 443 : 80);
    const host = target.url.hostname.replace(/^\[|\]$/g, '');
    if (target.url.protocol === 'https:') {
      // SNI only for names (an IP address is not a server name); the certificate is checked against `host` either way.
      const servername = target.tls.servername ?? (net.isIP(host) ? undefined : host);
      this.socket = tls.connect({ ...target.tls, host, port, servername, ALPNProtocols: ['http/1.1'] });
    } else this.socket = net.connect({ host, port });
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (err) => (this.error ??= err));
    this.socket.on('close', () => this.onClose());
    this.socket.on('timeout', () => this.socket.destroy(Object.assign(new Error(`no reply from the API server for ${this.socket.timeout} ms`), { code: 'ETIMEDOUT' })));
  }

  send(ex: Exchange): void {
    clearTimeout(this.idleTimer);
    this.ex = ex;
    this.mode = Mode.Head;
    const req = ex.req;
    let head = `${req.method} ${req.path} HTTP/1.1\r\nhost: ${this.pool.host}\r\n`;
    for (const k in req.headers) head += `${k}: ${req.headers[k]}\r\n`;
    if (req.body !== undefined) head += `content-length: ${Buffer.byteLength(req.body)}\r\n\r\n${req.body}`;
    else head += req.method === 'GET' || req.method === 'HEAD' ? '\r\n' : 'content-length: 0\r\n\r\n';
    this.socket.setTimeout(req.bodyTimeoutMs ?? 0);
    this.socket.write(head);
  }

  /** Ends the exchange under way (an abort, a stopped watch): the connection cannot carry another. */
  abort(ex: Exchange, err: Error): void {
    if (this.ex !== ex) return ex.finish(err);
    this.ex = undefined;
    ex.finish(err);
    this.socket.destroy();
  }

  close(): void {
    if (this.ex === undefined) this.socket.destroy();
    else this.keepAlive = false;
  }

  private onData(chunk: Buffer): void {
    const ex = this.ex;
    if (ex === undefined) {
      // Nothing was asked: bytes here are a protocol error (or a 408 before closing); never read them as a reply.
      this.socket.destroy();
      return;
    }
    ex.answered = true;
    let buf = chunk;
    if (this.pending !== undefined) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    for (let pos = 0; pos >= 0 && pos < buf.length; ) {
      // Bytes after a complete reply that nobody asked for: the stream is out of step.
      if (this.ex !== ex) return void this.socket.destroy();
      pos = this.read(ex, buf, pos);
    }
  }

  /** Reads what the current mode expects from `buf` at `pos`: the next position, or -1 to wait for more bytes (or after a failure). */
  private read(ex: Exchange, buf: Buffer, pos: number): number {
    switch (this.mode) {
      case Mode.Head: {
        const end = buf.indexOf(CRLF2, pos);
        if (end < 0) return this.keep(buf, pos, 'response head');
        return this.onHead(ex, buf.toString('latin1', pos, end)) ? end + 4 : -1;
      }
      case Mode.Length:
      case Mode.ChunkData:
        return this.readCounted(ex, buf, pos);
      case Mode.ChunkSize:
      case Mode.Trailers:
        return this.readLine(ex, buf, pos);
      case Mode.ChunkEnd:
        if (buf.length - pos < 2) return this.keep(buf, pos, 'chunk end');
        if (buf[pos] !== 13 || buf[pos + 1] !== 10) return this.fail(ex, 'chunk not followed by CRLF');
        this.mode = Mode.ChunkSize;
        return pos + 2;
      case Mode.UntilClose:
        ex.data(pos === 0 ? buf : buf.subarray(pos));
        return buf.length;
    }
  }

  /** Body bytes whose number is known: the rest of a Content-Length body or of one chunk. */
  private readCounted(ex: Exchange, buf: Buffer, pos: number): number {
    const n = Math.min(this.remaining, buf.length - pos);
    ex.data(pos === 0 && n === buf.length ? buf : buf.subarray(pos, pos + n));
    this.remaining -= n;
    if (this.remaining === 0) {
      if (this.mode === Mode.Length) this.complete(ex);
      else this.mode = Mode.ChunkEnd;
    }
    return pos + n;
  }

  /** A chunk's size line, or a trailer line (the empty one ends the reply). */
  private readLine(ex: Exchange, buf: Buffer, pos: number): number {
    const eol = buf.indexOf('\r\n', pos);
    if (eol < 0) return this.keep(buf, pos, 'chunk header');
    const line = buf.toString('latin1', pos, eol);
    if (this.mode === Mode.Trailers) {
      if (line === '') this.complete(ex);
      return eol + 2;
    }
    const size = /^[0-9a-fA-F]{1,12}(?=[ \t;]|$)/.exec(line);
    if (!size) return this.fail(ex, 'invalid chunk size');
    this.remaining = parseInt(size[0], 16);
    this.mode = this.remaining === 0 ? Mode.Trailers : Mode.ChunkData;
    return eol + 2;
  }

  /** Takes a parsed head; false when the reply is broken (the connection is then gone). */
  private onHead(ex: Exchange, text: string): boolean {
    const head = parseHead(text);
    if (!head) return this.fail(ex, 'malformed response head') > 0;
    // 1xx answers (100 Continue, 103 Early Hints) precede the real one.
    if (head.status < 200 && head.status !== 101) return true;
    const { headers, status } = head;
    const connection = String(headers.connection ?? '').toLowerCase();
    this.keepAlive &&= head.version === 1 ? !connection.includes('close') : connection.includes('keep-alive');
    this.idleMs = idleMsFor(headers);
    ex.head(status, headers);
    const length = bodyLength(ex.req.method, status, headers);
    if (length === 'invalid') return this.fail(ex, 'invalid content-length') > 0;
    if (length === 'chunked') this.mode = Mode.ChunkSize;
    else if (length === 'close') {
      this.keepAlive = false;
      this.mode = Mode.UntilClose;
    } else {
      this.remaining = length;
      this.mode = Mode.Length;
      if (length === 0) this.complete(ex);
    }
    return true;
  }

  /** Keeps the unread rest for the next chunk; -1. */
  private keep(buf: Buffer, pos: number, what: string): number {
    if (buf.length - pos > MAX_HEAD_BYTES) return this.fail(this.ex as Exchange, `${what} larger than ${MAX_HEAD_BYTES} bytes`);
    this.pending = pos === 0 ? buf : buf.subarray(pos);
    return -1;
  }

  /** Fails the exchange on a broken reply and drops the connection; -1. */
  private fail(ex: Exchange, message: string): number {
    this.abort(ex, Object.assign(new Error(`${message} from the API server`), { code: 'HPE_INVALID' }));
    return -1;
  }

  private complete(ex: Exchange): void {
    this.ex = undefined;
    this.pending = undefined;
    this.reused = true;
    ex.finish();
    if (!this.keepAlive || this.pool.closed || this.socket.destroyed) {
      this.socket.destroy();
      return;
    }
    this.socket.setTimeout(0);
    this.idleTimer = setTimeout(() => this.socket.destroy(), this.idleMs);
    this.idleTimer.unref();
    this.pool.idle(this);
  }

  private onClose(): void {
    clearTimeout(this.idleTimer);
    this.pool.gone(this);
    const ex = this.ex;
    if (ex === undefined) return;
    this.ex = undefined;
    if (this.mode === Mode.UntilClose && this.error === undefined) return ex.finish();
    const err = this.error ?? Object.assign(new Error('the API server closed the connection before the reply ended'), { code: 'ECONNRESET' });
    // A kept-alive connection the server closed just as we sent: an idempotent request goes again (Go's transport does).
    if (this.reused && !ex.answered && (ex.req.method === 'GET' || ex.req.method === 'HEAD') && !this.pool.closed) ex.start();
    else ex.finish(err);
  }
}

/** Keep-alive connections to one origin with one set of TLS options; as many as requests in flight. */
export class Http1Pool {
  readonly host: string;
  closed = false;
  private readonly free: Connection[] = [];
  private readonly all = new Set<Connection>();

  constructor(private readonly target: Http1Target) {
    this.host = target.url.host;
  }

  /**
   * Sends `req`. Resolves once the reply is complete, or, given a `sink`, once a 2xx reply's head
   * arrived (its body then streams into the sink). Any other reply is read in full. An abort of
   * `signal` before that fails it with the signal's reason (an AbortError); after it, the sink
   * ends with that reason.
   */
  request(req: Http1Request, signal?: AbortSignal, sink?: BodySink): Promise<Reply> {
    // Header injection: a value from a kubeconfig or a caller must not start a header or request of its own.
    for (const k in req.headers) {
      if (/[\r\n]/.test(k) || /[\r\n]/.test(req.headers[k] as string)) return Promise.reject(new Error(`header ${JSON.stringify(k)} holds a line break`));
    }
    if (/\s/.test(req.path)) return Promise.reject(new Error('request path holds white space'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.closed) return Promise.reject(new Error('the connection pool is closed'));
    return new Promise((resolve, reject) => new Exchange(() => this.acquire(), req, signal, sink, { resolve, reject }).start());
  }

  /** Closes idle connections now and the others once their reply ended (a superseded TLS config). */
  close(): void {
    this.closed = true;
    for (const c of this.all) c.close();
  }

  /** Closes every connection at once, watches included (on shutdown). */
  destroy(): void {
    this.closed = true;
    for (const c of this.all) c.socket.destroy();
  }

  /** A free connection (the most recently used), or a new one. */
  acquire(): Connection {
    const free = this.free.pop();
    if (free) return free;
    const c = new Connection(this.target, this);
    this.all.add(c);
    return c;
  }

  /** A connection ready for the next request. */
  idle(c: Connection): void {
    this.free.push(c);
  }

  /** A connection that closed. */
  gone(c: Connection): void {
    this.all.delete(c);
    const i = this.free.indexOf(c);
    if (i >= 0) this.free.splice(i, 1);
  }
}
