/**
 * A simulated kubelet's transport to the API server, as client-go's: one per credential (bootstrap
 * token, then each client certificate). Against a server that negotiates HTTP/2 it is one TLS
 * connection multiplexing every request and watch (client-go's default with an h2 server); otherwise
 * HTTP/1.1 keep-alive connections, one for requests and one per watch. Every TLS connection opened is
 * reported through `onConnect`, so the bench can count connections per join.
 *
 * HTTP/2 as Go's transport: after a GOAWAY (or the connection closing) the next request opens a new
 * connection, streams already running finish on the old one, and a request the server refused
 * unprocessed (REFUSED_STREAM, or sent after the GOAWAY) is sent again once on the new connection.
 *
 * A client certificate's transport rotates as kubelet's (pkg/kubelet/certificate/transport.go): new
 * handshakes present the new certificate, and every connection open is closed at once (its dialer's
 * CloseAll), so what runs on them fails with ERR_CLOSED_BY_ROTATION for its caller to retry.
 */
import { once } from 'node:events';
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { Pool } from 'undici';

export type Protocol = 'h2' | 'http/1.1';

export interface TransportTarget {
  url: string;
  caPem: string;
  /** What the transports speak; the bench asks the server once (negotiatedProtocol) unless told --http1. */
  protocol: Protocol;
}

export interface TransportCredentials {
  certPem?: string;
  keyPem?: string;
}

/** A response read whole. */
export interface Reply {
  status: number;
  retryAfter: string | undefined;
  text: string;
  /**
   * How long the request waited for its connection to be ready (TCP and TLS; 0 on one already up).
   * SIG Scalability's latency SLI starts when the API server gets the request, so the fleet counts
   * this wait apart from the request's latency.
   */
  connectWaitMs: number;
}

/** A streamed response (a watch): its status, then its body until it ends or is aborted. */
export interface StreamReply {
  status: number;
  retryAfter: string | undefined;
  body: AsyncIterable<Buffer>;
  text(): Promise<string>;
}

export interface Transport {
  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply>;
  stream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<StreamReply>;
  /** Ends the watches at once; requests under way finish first unless `now`. */
  close(now?: boolean): void;
  /** New connections present `creds`; every connection open is closed now, failing what runs on it (closedByRotation). */
  rotate(creds: TransportCredentials): void;
}

const CLOSED_BY_ROTATION = 'ERR_CLOSED_BY_ROTATION';
const rotationError = (): Error => Object.assign(new Error('connection closed by the client certificate rotation'), { code: CLOSED_BY_ROTATION });

/** Whether a request or watch failed because its own transport's rotation closed its connection. */
export const closedByRotation = (err: unknown): boolean => (err as { code?: unknown } | undefined)?.code === CLOSED_BY_ROTATION;

/** How long a new connection may take to be ready (undici's connect timeout; over h2, Go's TLSHandshakeTimeout, from the TCP connect). */
const CONNECT_TIMEOUT_MS = 10_000;
/** How long a TCP dial may take over h2 (Go's net.Dialer in client-go's transport: 30 s). */
const DIAL_TIMEOUT_MS = 30_000;

/** The protocol the server picks when offered h2 and http/1.1, as a Go client offers them. */
export async function negotiatedProtocol(url: string, caPem: string): Promise<Protocol> {
  const { hostname, port } = new URL(url);
  const socket = tls.connect({ host: hostname, port: Number(port), ca: caPem, ALPNProtocols: ['h2', 'http/1.1'] });
  try {
    await once(socket, 'secureConnect');
    return socket.alpnProtocol === 'h2' ? 'h2' : 'http/1.1';
  } finally {
    socket.destroy();
  }
}

/** The CA-only contexts (bootstrap tokens' transports), one per CA for the whole process. */
const caContexts = new Map<string, tls.SecureContext>();

/**
 * The TLS context of one credential's transport: built once, as client-go builds its tls.Config once
 * per transport, and once per process for the CA alone, as each kubelet reads its CA file once.
 * Building one for every new connection from the PEM texts was 12% of a simulator process's CPU in
 * a 400-node join, CPU taken from up on the shared cores; the handshakes are the same either way.
 */
export function secureContextFor(caPem: string, creds: TransportCredentials): tls.SecureContext {
  if (creds.certPem === undefined) {
    let context = caContexts.get(caPem);
    if (!context) caContexts.set(caPem, (context = tls.createSecureContext({ ca: caPem })));
    return context;
  }
  return tls.createSecureContext({ ca: caPem, cert: creds.certPem, key: creds.keyPem });
}

export function openTransport(target: TransportTarget, creds: TransportCredentials, onConnect: () => void): Transport {
  return target.protocol === 'h2' ? new Http2Transport(target, creds, onConnect) : new Http1Transport(target, creds, onConnect);
}

const retryAfterOf = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** HTTP/1.1 as client-go without h2: a keep-alive connection for requests and one per watch. */
class Http1Transport implements Transport {
  private pool!: Pool;
  private watches!: Pool;
  /** When the request pool's connection last became ready (performance.now()). */
  private connectedAt = 0;

  constructor(
    private readonly target: TransportTarget,
    creds: TransportCredentials,
    private readonly onConnect: () => void,
  ) {
    this.open(creds);
  }

  private open(creds: TransportCredentials): void {
    const connect = { secureContext: secureContextFor(this.target.caPem, creds) };
    // client-go keeps idle connections 90 s (undici: 4 s), so Lease renewals reuse theirs. undici 8
    // offers h2 by default: refused here, or an h2 server would get one multiplexed connection per pool.
    const options = { connect, keepAliveTimeout: 90_000, keepAliveMaxTimeout: 600_000, allowH2: false };
    this.pool = new Pool(this.target.url, { ...options, connections: 1 });
    this.watches = new Pool(this.target.url, { ...options, connections: 3, bodyTimeout: 0 });
    this.pool.on('connect', () => {
      this.connectedAt = performance.now();
      this.onConnect();
    });
    this.watches.on('connect', this.onConnect);
  }

  async request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
    const started = performance.now();
    const res = await this.pool.request({ method: method as 'GET', path, headers, body });
    // One connection: a request that started before it was ready waited for it (undici's pool has no per-request figure).
    const connectWaitMs = Math.max(0, this.connectedAt - started);
    return { status: res.statusCode, retryAfter: retryAfterOf(res.headers['retry-after']), text: await res.body.text(), connectWaitMs };
  }

  async stream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<StreamReply> {
    const res = await this.watches.request({ method: 'GET', path, headers, signal });
    return { status: res.statusCode, retryAfter: retryAfterOf(res.headers['retry-after']), body: res.body, text: () => res.body.text() };
  }

  close(now = false): void {
    void (now ? this.pool.destroy() : this.pool.close());
    void this.watches.destroy();
  }

  rotate(creds: TransportCredentials): void {
    const old = [this.pool, this.watches];
    this.open(creds);
    // undici fails what runs or waits on a pool destroyed with an error with that error.
    for (const pool of old) pool.destroy(rotationError()).catch(() => undefined);
  }
}

/** Whether a stream's failure means the server never processed it, so it may be sent again. */
function unprocessed(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ERR_HTTP2_GOAWAY_SESSION' || code === 'ERR_HTTP2_INVALID_SESSION' || /NGHTTP2_REFUSED_STREAM/.test(String(err));
}

/** The response headers of a stream; rejects if it fails or closes before them. */
function responseOf(stream: ClientHttp2Stream): Promise<IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    stream.once('response', resolve);
    stream.once('error', reject);
    // node:http2 closes a stream CANCEL (code 8, no error) both when the server resets it and when the
    // connection under it closes: which one it was says who cancelled.
    stream.once('close', () => {
      const session = stream.session;
      const connection = !session || session.destroyed ? 'gone' : session.closed ? 'closing' : 'open';
      reject(Object.assign(new Error(`stream closed before its response (code ${stream.rstCode}, connection ${connection})`), { code: 'ERR_HTTP2_STREAM_CLOSED' }));
    });
  });
}

/** Resolves once a session's handshakes are done; rejects if it fails or closes first. */
function connected(session: ClientHttp2Session): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: Error): void => {
      session.off('connect', onConnect).off('error', settle).off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onConnect = (): void => settle();
    const onClose = (): void => settle(Object.assign(new Error('connection closed before it was ready'), { code: 'ERR_HTTP2_INVALID_SESSION' }));
    session.on('connect', onConnect).on('error', settle).on('close', onClose);
  });
}

/** HTTP/2: one TLS connection carries every request and watch; a new one after GOAWAY or a close. */
class Http2Transport implements Transport {
  private session: ClientHttp2Session | undefined;
  /** Every connection not yet closed, a GOAWAY'd one still running streams included: a rotation closes them all. */
  private readonly sessions = new Set<ClientHttp2Session>();
  private readonly watches = new Set<ClientHttp2Stream>();
  private closed = false;
  private context: tls.SecureContext | undefined;
  /** The new connection being dialed (TCP), for the requests that need one meanwhile. */
  private dialing: Promise<ClientHttp2Session> | undefined;

  constructor(
    private readonly target: TransportTarget,
    private creds: TransportCredentials,
    private readonly onConnect: () => void,
  ) {}

  /**
   * The connection new streams go on: the current one unless it is going away, else a new one, which
   * requests needing one meanwhile share. Dialed as Go's transport dials: TCP first (a refused dial
   * fails here, before any TLS or HTTP/2 state exists: it cost the simulator 0.44 ms of CPU with them,
   * 0.13 without, thousands of times a second while up restarts), then the TLS handshake, whose 10 s
   * (TLSHandshakeTimeout) count from the TCP connect.
   */
  private current(): ClientHttp2Session | Promise<ClientHttp2Session> {
    if (this.closed) throw Object.assign(new Error('transport closed'), { code: 'ERR_TRANSPORT_CLOSED' });
    const s = this.session;
    if (s && !s.closed && !s.destroyed) return s;
    this.dialing ??= this.dial().finally(() => (this.dialing = undefined));
    return this.dialing;
  }

  private async dial(): Promise<ClientHttp2Session> {
    const { hostname, port } = new URL(this.target.url);
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = net.connect({ host, port: Number(port) });
    this.onConnect();
    const dialTimer = setTimeout(() => socket.destroy(Object.assign(new Error('dial timeout'), { code: 'ETIMEDOUT' })), DIAL_TIMEOUT_MS);
    try {
      await once(socket, 'connect');
    } finally {
      clearTimeout(dialTimer);
    }
    if (this.closed) {
      socket.destroy();
      throw Object.assign(new Error('transport closed'), { code: 'ERR_TRANSPORT_CLOSED' });
    }
    this.context ??= secureContextFor(this.target.caPem, this.creds);
    const secureContext = this.context;
    const session = http2.connect(this.target.url, { createConnection: () => tls.connect({ socket, host, secureContext, ALPNProtocols: ['h2'] }) });
    const forget = (): void => {
      if (this.session === session) this.session = undefined;
    };
    // Streams report their own failures; a connection's error only means the next request needs a new one.
    session.on('error', forget);
    session.on('goaway', forget);
    session.on('close', forget);
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
    const timer = setTimeout(() => session.destroy(Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' })), CONNECT_TIMEOUT_MS);
    session.once('connect', () => clearTimeout(timer));
    session.once('close', () => clearTimeout(timer));
    this.session = session;
    return session;
  }

  /**
   * Opens a stream and waits for its response headers; a stream the server refused unprocessed is
   * sent once more. `connectWaitMs`: how long it waited for a new connection to be ready first.
   */
  private async open(headers: http2.OutgoingHttpHeaders, body: string | undefined, signal?: AbortSignal): Promise<{ stream: ClientHttp2Stream; head: IncomingHttpHeaders; connectWaitMs: number }> {
    let connectWaitMs = 0;
    for (let attempt = 0; ; attempt++) {
      let stream: ClientHttp2Stream | undefined;
      try {
        const started = performance.now();
        const current = this.current();
        const session = current instanceof Promise ? await current : current;
        if (session.connecting) {
          // http2 would queue the stream until then anyway; waiting here tells the wait apart.
          await connected(session);
          connectWaitMs += performance.now() - started;
        } else if (session !== current) connectWaitMs += performance.now() - started;
        stream = session.request(headers, { endStream: body === undefined, signal });
        // A late error (a stream reset after it was read or aborted) must not be an uncaught one.
        stream.on('error', () => undefined);
        if (body !== undefined) stream.end(body);
        return { stream, head: await responseOf(stream), connectWaitMs };
      } catch (err) {
        stream?.destroy();
        if (attempt > 0 || signal?.aborted || !unprocessed(err)) throw err;
      }
    }
  }

  async request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
    const { stream, head, connectWaitMs } = await this.open({ ':method': method, ':path': path, ...headers }, body);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { status: Number(head[':status']), retryAfter: retryAfterOf(head['retry-after']), text: Buffer.concat(chunks).toString('utf8'), connectWaitMs };
  }

  async stream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<StreamReply> {
    const { stream, head } = await this.open({ ':method': 'GET', ':path': path, ...headers }, undefined, signal);
    this.watches.add(stream);
    stream.once('close', () => this.watches.delete(stream));
    const text = async (): Promise<string> => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    };
    return { status: Number(head[':status']), retryAfter: retryAfterOf(head['retry-after']), body: stream as AsyncIterable<Buffer>, text };
  }

  close(now = false): void {
    this.closed = true;
    for (const w of this.watches) w.close(http2.constants.NGHTTP2_CANCEL);
    if (now) this.session?.destroy();
    else this.session?.close();
    this.session = undefined;
  }

  rotate(creds: TransportCredentials): void {
    this.creds = creds;
    this.context = undefined;
    this.session = undefined;
    // Destroyed with an error, node:http2 fails each stream with it (without one, a body cut short reads as ended).
    for (const session of this.sessions) session.destroy(rotationError());
  }
}
