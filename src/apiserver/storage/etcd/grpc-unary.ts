/**
 * gRPC calls to one etcd member: unary calls (KV, Lease) and the Watch stream, on this client's own
 * HTTP/2 connection (h2-connection.ts) rather than Node's (node:http2 and its Duplex streams,
 * async hooks and header objects cost an API server on etcd about 8% of its main thread). What a
 * unary call needs of gRPC over HTTP/2 is small: a POST with the length-prefixed message, the
 * reply's message, and grpc-status in the trailers (or in the headers of a trailers-only reply).
 * Around it, what a channel gives:
 * - one connection per member, opened on first use and again after it failed or went away;
 * - keepalive pings (every 10 s while calls run, answered within 5 s) that end a connection to a
 *   member that stopped answering (SIGSTOP, a partition), so its calls fail before their deadlines;
 * - GOAWAY: the connection takes no new calls and finishes the ones it runs; the calls the member
 *   says it never processed (past GOAWAY's last stream, or REFUSED_STREAM) fail as unsent;
 * - a deadline per call, sent as grpc-timeout and enforced here by resetting the stream;
 * - failures as the etcd3 package types them (castGrpcError), with grpc-js's messages, and whether
 *   the call can have reached etcd at all (`neverSent`): a write that never left is safe to refuse
 *   (503); one that did may have been applied (504).
 */
import { castGrpcError } from 'etcd3';
import { H2Error } from './h2-frames.js';
import { H2Connection } from './h2-connection.js';
import type { H2Stream, StreamEnd, StreamHandler } from './h2-stream.js';
import type { HeaderField } from './hpack.js';

export interface MemberTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

const KEEPALIVE_MS = 10_000;
const KEEPALIVE_TIMEOUT_MS = 5_000;
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
  h2: H2Connection;
  /** Calls running on it: etcd counts pings on a connection without calls as abuse (GOAWAY too_many_pings). */
  active: number;
  keepalive?: NodeJS.Timeout;
}

/** A call's gRPC status, from the response headers (trailers-only) or the trailers. */
export class GrpcStatus {
  code: number | undefined;
  details = '';

  /** Reads one header list: a non-200 :status decides the code as gRPC's HTTP mapping does. */
  read(fields: HeaderField[]): void {
    for (const [name, value] of fields) {
      if (name === ':status' && value !== '200') {
        const status = Number(value);
        this.code = status === 429 || (status >= 502 && status <= 504) ? UNAVAILABLE : UNKNOWN;
        this.details = `Received HTTP status code ${value}`;
        return;
      }
      if (name === 'grpc-status') this.code = Number(value);
      else if (name === 'grpc-message') this.details = grpcMessage(value);
    }
  }
}

export class MemberConnection {
  private conn: Connection | undefined;
  private closed = false;
  private readonly scheme: string;
  private readonly byPath = new Map<string, readonly HeaderField[]>();

  constructor(
    readonly url: URL,
    private readonly tls: MemberTls | undefined,
  ) {
    this.scheme = url.protocol === 'https:' ? 'https' : 'http';
  }

  /** Sends one gRPC frame to `path` and resolves with the reply's message (without its 5-byte prefix). */
  call(path: string, frame: Buffer, deadline: number): Promise<Buffer> {
    if (this.closed) return Promise.reject(grpcError(UNAVAILABLE, 'etcd client is closed', true));
    const timeoutMs = Math.max(1, deadline - Date.now());
    return new Promise((resolve, reject) => {
      const call = new UnaryCall(resolve, reject, timeoutMs);
      try {
        const [conn, stream] = this.open(this.fields(path), call, [['grpc-timeout', `${timeoutMs}m`]]);
        call.start(conn, stream, frame);
      } catch (err) {
        reject(grpcError(UNAVAILABLE, `No connection established: ${(err as Error).message}`, true));
      }
    });
  }

  /**
   * Opens a long-lived call (the Watch) with the given extra header fields: no deadline, and it counts
   * as a running call for the keepalive pings. Throws when no connection takes it (twice in a row).
   */
  stream(path: string, extra: HeaderField[], handler: StreamHandler): H2Stream {
    const running = { conn: undefined as Connection | undefined };
    const [conn, stream] = this.open(this.fields(path), {
      onHeaders: (fields, end) => handler.onHeaders(fields, end),
      onData: (data) => handler.onData(data),
      onClose: (end) => {
        if (running.conn) running.conn.active--;
        handler.onClose(end);
      },
    }, extra);
    // A stream that ended while opening never ran.
    if (!stream.isDone()) {
      running.conn = conn;
      conn.active++;
    }
    return stream;
  }

  /** Lets the current connection finish its calls and close; the next call connects afresh. */
  reset(): void {
    if (this.conn) this.drop(this.conn);
  }

  close(): void {
    this.closed = true;
    this.reset();
  }

  /** A method's constant request fields: one array per path, so the connection's encoder reuses its encoding. */
  private fields(path: string): readonly HeaderField[] {
    let fields = this.byPath.get(path);
    if (!fields) {
      fields = [[':method', 'POST'], [':scheme', this.scheme], [':path', path], [':authority', this.url.host], ['content-type', 'application/grpc'], ['te', 'trailers']];
      this.byPath.set(path, fields);
    }
    return fields;
  }

  /** A stream on the current connection, or on a new one when the current one just stopped taking streams. */
  private open(fields: readonly HeaderField[], handler: StreamHandler, extra?: readonly HeaderField[]): [Connection, H2Stream] {
    for (let attempt = 0; ; attempt++) {
      const conn = this.connection();
      try {
        return [conn, conn.h2.request(fields, handler, extra)];
      } catch (err) {
        this.drop(conn);
        if (attempt > 0) throw err;
      }
    }
  }

  private connection(): Connection {
    if (this.conn) return this.conn;
    const conn: Connection = { h2: new H2Connection(this.url, this.tls), active: 0 };
    this.conn = conn;
    conn.keepalive = setInterval(() => ping(conn), KEEPALIVE_MS).unref();
    // The connection is replaced on the next call once it takes no new streams (GOAWAY, failure, close).
    conn.h2.onClosing = () => {
      if (this.conn === conn) this.conn = undefined;
      clearInterval(conn.keepalive);
    };
    // Pending calls keep the process alive through their deadline timers; an idle connection does not.
    conn.h2.unref();
    return conn;
  }

  private drop(conn: Connection): void {
    if (this.conn === conn) this.conn = undefined;
    clearInterval(conn.keepalive);
    // A connection still being set up has no calls of its own to finish.
    if (!conn.h2.connected) conn.h2.destroy(new Error('connection dropped before it was established'));
    else conn.h2.close();
  }
}

/** Ends the connection when the member does not answer a ping in time: a stopped or cut-off member. */
function ping(conn: Connection): void {
  const h2 = conn.h2;
  if (conn.active === 0 || h2.destroyed || !h2.connected) return;
  const timer = setTimeout(() => h2.destroy(new Error(`keepalive ping not answered within ${KEEPALIVE_TIMEOUT_MS}ms`)), KEEPALIVE_TIMEOUT_MS).unref();
  h2.ping(() => clearTimeout(timer));
}

/** One unary call: its reply's bytes, its status, its deadline; settles its promise once. */
class UnaryCall implements StreamHandler {
  private readonly chunks: Buffer[] = [];
  private readonly status = new GrpcStatus();
  private conn: Connection | undefined;
  private stream: H2Stream | undefined;
  private timer: NodeJS.Timeout | undefined;
  private settled = false;

  constructor(
    private readonly resolve: (reply: Buffer) => void,
    private readonly reject: (err: Error) => void,
    private readonly timeoutMs: number,
  ) {}

  start(conn: Connection, stream: H2Stream, frame: Buffer): void {
    if (this.settled) return;
    this.conn = conn;
    this.stream = stream;
    conn.active++;
    this.timer = setTimeout(() => this.expire(), this.timeoutMs);
    stream.write(frame, true);
  }

  onHeaders(fields: HeaderField[]): void {
    this.status.read(fields);
  }

  onData(data: Buffer): void {
    this.chunks.push(data);
  }

  onClose(end: StreamEnd): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    if (this.conn) this.conn.active--;
    const { code, details } = this.status;
    if (code === 0) {
      const reply = message(this.chunks);
      if (reply) this.resolve(reply);
      else this.reject(grpcError(INTERNAL, 'malformed reply message'));
    } else if (code !== undefined) this.reject(grpcError(code, details));
    else this.reject(failure(end, this.conn?.h2.connected ?? false));
  }

  private expire(): void {
    const connected = this.conn!.h2.connected;
    this.stream!.cancel(H2Error.CANCEL);
    if (this.settled) return;
    this.settled = true;
    this.conn!.active--;
    const connecting = connected ? '' : ' waiting for a connection';
    this.reject(grpcError(DEADLINE_EXCEEDED, `Deadline exceeded after ${this.timeoutMs}ms${connecting}`, !connected));
  }
}

/** A call that ended without a gRPC status, as grpc-js words it. */
function failure(end: StreamEnd, connected: boolean): Error {
  if (!connected || (end.unsent && end.rstCode === undefined)) return grpcError(UNAVAILABLE, `No connection established: ${end.error?.message ?? 'connection closed'}`, true);
  if (end.rstCode === H2Error.REFUSED_STREAM) return grpcError(UNAVAILABLE, 'Stream refused by the member before call started', true);
  if (end.rstCode === H2Error.CANCEL) return grpcError(CANCELLED, 'Call cancelled by the member');
  if (end.error) return grpcError(UNAVAILABLE, `Connection dropped: ${end.error.message}`);
  return grpcError(INTERNAL, `Stream closed without a status (RST_STREAM code ${end.rstCode ?? 0})`);
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
