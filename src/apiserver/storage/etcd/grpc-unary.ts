/**
 * Unary gRPC calls to one etcd member on Node's HTTP/2, without grpc-js's per-call machinery
 * (resolver, load balancer, interceptors, filters, metadata objects: about a sixth of an API server's
 * main thread on etcd). What a unary call needs of gRPC over HTTP/2 is small: a POST with the
 * length-prefixed message, the reply's message, and grpc-status in the trailers (or in the headers of
 * a trailers-only reply). Around it, what a channel gave:
 * - one connection per member, opened on first use and again after it failed or was dropped;
 * - keepalive pings (every 10 s while calls run, answered within 5 s) that end a connection to a member
 *   that stopped answering (SIGSTOP, a partition), so its calls fail before their deadlines;
 * - GOAWAY: the connection takes no new calls, the calls it was running finish, the next call
 *   connects afresh; the calls the member says it never processed (REFUSED_STREAM) fail as unsent;
 * - a deadline per call, sent as grpc-timeout and enforced here by cancelling the stream;
 * - failures as the etcd3 package types them (castGrpcError), with grpc-js's messages, and whether
 *   the call can have reached etcd at all (`neverSent`): a write that never left is safe to refuse
 *   (503); one that did may have been applied (504).
 */
import http2 from 'node:http2';
import { castGrpcError } from 'etcd3';

export interface MemberTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

const KEEPALIVE_MS = 10_000;
const KEEPALIVE_TIMEOUT_MS = 5_000;
const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;
const CODE_NAMES = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED'];
const CANCELLED = 1;
const UNKNOWN = 2;
const DEADLINE_EXCEEDED = 4;
const INTERNAL = 13;
export const UNAVAILABLE = 14;

const unsent = new WeakSet<Error>();

/** The call failed before anything of it reached the member, so etcd cannot have applied it. */
export function neverSent(err: Error): boolean {
  return unsent.has(err);
}

/** A gRPC failure as etcd3 types it (GRPCUnavailableError, EtcdError...), its message as grpc-js words it. */
export function grpcError(code: number, details: string, notSent = false): Error {
  const err = Object.assign(new Error(`${code} ${CODE_NAMES[code] ?? 'UNKNOWN'}: ${details}`), { code, details });
  const typed = castGrpcError(err);
  if (notSent) unsent.add(typed);
  return typed;
}

interface Connection {
  session: http2.ClientHttp2Session;
  connected: boolean;
  /** Calls running on it: etcd counts pings on a connection without calls as abuse (GOAWAY too_many_pings). */
  active: number;
  keepalive?: NodeJS.Timeout;
}

export class MemberConnection {
  private conn: Connection | undefined;
  private closed = false;
  private readonly options: http2.SecureClientSessionOptions;

  constructor(
    readonly url: URL,
    tls: MemberTls | undefined,
  ) {
    this.options = url.protocol === 'https:' && (tls?.ca || tls?.cert) ? { ca: tls.ca, cert: tls.cert, key: tls.key } : {};
  }

  /** Sends one gRPC frame to `path` and resolves with the reply's message (without its 5-byte prefix). */
  call(path: string, frame: Buffer, deadline: number): Promise<Buffer> {
    if (this.closed) return Promise.reject(grpcError(UNAVAILABLE, 'etcd client is closed', true));
    let conn = this.connection();
    let stream: http2.ClientHttp2Stream;
    const timeoutMs = Math.max(1, deadline - Date.now());
    const headers = { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': `${timeoutMs}m` };
    try {
      stream = conn.session.request(headers, { endStream: false });
    } catch {
      // The session went away between calls (GOAWAY, out of stream ids): nothing was sent on it.
      this.drop(conn);
      conn = this.connection();
      try {
        stream = conn.session.request(headers, { endStream: false });
      } catch (err) {
        this.drop(conn);
        return Promise.reject(grpcError(UNAVAILABLE, `No connection established: ${(err as Error).message}`, true));
      }
    }
    conn.active++;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let code: number | undefined;
      let details = '';
      let failure: Error | undefined;
      let expired = false;
      const timer = setTimeout(() => {
        expired = true;
        // A stream still waiting for its connection has nothing to cancel on the wire (and close() would wait for it).
        if (stream.pending) stream.destroy();
        else stream.close(NGHTTP2_CANCEL);
      }, timeoutMs);
      const status = (h: http2.IncomingHttpHeaders): void => {
        const value = h['grpc-status'];
        if (value === undefined) return;
        code = Number(value);
        details = grpcMessage(h['grpc-message']);
      };
      stream.on('response', (h) => {
        const httpStatus = h[':status'];
        if (httpStatus !== 200) {
          code = httpStatus === 429 || (httpStatus !== undefined && httpStatus >= 502 && httpStatus <= 504) ? UNAVAILABLE : UNKNOWN;
          details = `Received HTTP status code ${httpStatus}`;
        } else status(h);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('trailers', status);
      stream.on('error', (err: Error) => (failure = err));
      stream.on('close', () => {
        clearTimeout(timer);
        conn.active--;
        if (code === 0) {
          const reply = message(chunks);
          if (reply) resolve(reply);
          else reject(grpcError(INTERNAL, 'malformed reply message'));
        } else if (code !== undefined) {
          reject(grpcError(code, details));
        } else if (expired) {
          const connecting = conn.connected ? '' : ' waiting for a connection';
          reject(grpcError(DEADLINE_EXCEEDED, `Deadline exceeded after ${timeoutMs}ms${connecting}`, !conn.connected));
        } else if (!conn.connected) {
          reject(grpcError(UNAVAILABLE, `No connection established: ${failure?.message ?? 'connection closed'}`, true));
        } else if (stream.rstCode === NGHTTP2_REFUSED_STREAM) {
          reject(grpcError(UNAVAILABLE, 'Stream refused by the member before call started', true));
        } else if (stream.rstCode === NGHTTP2_CANCEL) {
          reject(grpcError(CANCELLED, 'Call cancelled by the member'));
        } else if (failure) {
          reject(grpcError(UNAVAILABLE, `Connection dropped: ${failure.message}`));
        } else {
          reject(grpcError(INTERNAL, `Stream closed without a status (RST_STREAM code ${stream.rstCode ?? 0})`));
        }
      });
      stream.end(frame);
    });
  }

  /**
   * Opens a long-lived call (the Watch) with the given extra headers: no deadline, and it counts as a
   * running call for the keepalive pings, so a member that stops answering ends it. Throws when no
   * connection takes it (the session closed twice in a row).
   */
  stream(path: string, extra: Record<string, string>): http2.ClientHttp2Stream {
    const headers = { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...extra };
    for (let attempt = 0; ; attempt++) {
      const conn = this.connection();
      try {
        const stream = conn.session.request(headers, { endStream: false });
        conn.active++;
        stream.once('close', () => conn.active--);
        return stream;
      } catch (err) {
        this.drop(conn);
        if (attempt > 0) throw err;
      }
    }
  }

  /** Lets the current connection finish its calls and close; the next call connects afresh. */
  reset(): void {
    if (this.conn) this.drop(this.conn);
  }

  close(): void {
    this.closed = true;
    this.reset();
  }

  private connection(): Connection {
    if (this.conn) return this.conn;
    const session = http2.connect(this.url.origin, this.options);
    const conn: Connection = { session, connected: false, active: 0 };
    this.conn = conn;
    session.once('connect', () => {
      conn.connected = true;
      conn.keepalive = setInterval(() => ping(conn), KEEPALIVE_MS).unref();
    });
    // Failures reach the calls through their streams; the connection is replaced on the next call.
    session.on('error', () => this.forget(conn));
    session.once('goaway', () => this.forget(conn));
    session.once('close', () => {
      clearInterval(conn.keepalive);
      this.forget(conn);
    });
    // Pending calls keep the process alive through their deadline timers; an idle connection does not.
    session.unref();
    return conn;
  }

  private forget(conn: Connection): void {
    if (this.conn === conn) this.conn = undefined;
  }

  private drop(conn: Connection): void {
    this.forget(conn);
    clearInterval(conn.keepalive);
    // A connection still being set up has no calls of its own to finish.
    if (!conn.connected) conn.session.destroy();
    else if (!conn.session.closed) conn.session.close();
  }
}

/** Ends the connection when the member does not answer a ping in time: a stopped or cut-off member. */
function ping(conn: Connection): void {
  const session = conn.session;
  if (conn.active === 0 || session.closed || session.destroyed) return;
  const timer = setTimeout(() => session.destroy(new Error(`keepalive ping not answered within ${KEEPALIVE_TIMEOUT_MS}ms`)), KEEPALIVE_TIMEOUT_MS).unref();
  try {
    session.ping((err) => {
      clearTimeout(timer);
      if (err && !session.destroyed) session.destroy(err);
    });
  } catch (err) {
    clearTimeout(timer);
    session.destroy(err as Error);
  }
}

/** The reply's one message, or undefined when the frame is compressed or truncated. */
function message(chunks: Buffer[]): Buffer | undefined {
  const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  if (data.length < 5 || data[0] !== 0) return undefined;
  const length = data.readUInt32BE(1);
  return data.length >= 5 + length ? data.subarray(5, 5 + length) : undefined;
}

/** grpc-message is percent-encoded (gRPC over HTTP/2). */
export function grpcMessage(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
