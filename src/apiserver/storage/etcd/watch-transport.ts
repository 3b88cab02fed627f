/**
 * The gRPC side of the watch: a Watch RPC (etcd's `etcdserverpb.Watch/Watch`) opened on one member
 * at a time, moving to the next member each time the caller asks for another stream. The RPC carries
 * `hasleader: true`, as etcd's Go client does for kube-apiserver's watches (WithRequireLeader): a
 * member that loses its leader ends the stream instead of leaving it silent, so the watch moves to a
 * member that has one. It is a bidirectional stream on the member's HTTP/2 connection (grpc-unary.ts),
 * its messages encoded and decoded by hand (watch-proto.ts), as the KV calls are.
 */
import { EventEmitter } from 'node:events';
import type { EtcdClientOptions } from './etcd-client.js';
import { grpcError, GrpcStatus, MemberConnection, UNAVAILABLE } from './grpc-unary.js';
import { H2Error } from './h2-frames.js';
import type { H2Stream, StreamEnd, StreamHandler } from './h2-stream.js';
import type { HeaderField } from './hpack.js';
import { decodeWatchResponse, encodeWatchRequest, type WatchRequest, type WatchResponse } from './watch-proto.js';

/** One Watch RPC, as the multiplexer uses it (an HTTP/2 stream, or a test's stand-in). */
export interface WatchCall {
  write(req: WatchRequest): void;
  /** Ends the call; nothing it reports afterwards matters to the caller. */
  cancel(): void;
  on(event: 'data', listener: (res: WatchResponse) => void): void;
  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'end', listener: () => void): void;
}

export interface WatchTransport {
  /** Opens a Watch RPC on the member after the one the previous call used. */
  open(): { call: WatchCall; endpoint: string };
  close(): void;
}

const WATCH = '/etcdserverpb.Watch/Watch';

export function h2WatchTransport(opts: EtcdClientOptions): WatchTransport {
  const members = opts.endpoints.map((endpoint) => ({ endpoint, connection: new MemberConnection(new URL(endpoint), opts.tls) }));
  let next = Math.floor(Math.random() * members.length);
  return {
    open() {
      const member = members[next % members.length]!;
      next++;
      const call = new H2WatchCall();
      call.attach(member.connection.stream(WATCH, [['hasleader', 'true']], call));
      return { call, endpoint: member.endpoint };
    },
    close() {
      for (const m of members) m.connection.close();
    },
  };
}

/**
 * A Watch RPC on an HTTP/2 stream: requests framed as they are written, responses parsed as their
 * frames complete (one may span several DATA frames, or a frame hold several), and the call's end as
 * one 'end' (grpc-status 0) or one 'error'.
 */
export class H2WatchCall extends EventEmitter implements WatchCall, StreamHandler {  private readonly messages = new GrpcMessages();
  private readonly status = new GrpcStatus();
  private stream: Pick<H2Stream, 'write' | 'cancel'> | undefined;
  private failure: Error | undefined;
  private ended = false;

  /** The call's stream, once opened with this call as its handler. */
  attach(stream: Pick<H2Stream, 'write' | 'cancel'>): void {
    this.stream = stream;
  }

  write(req: WatchRequest): void {
    if (this.ended || !this.stream) return;
    this.stream.write(encodeWatchRequest(req).frame());
  }

  cancel(): void {
    this.removeAllListeners('data');
    this.ended = true;
    this.stream?.cancel(H2Error.CANCEL);
  }

  onHeaders(fields: HeaderField[]): void {
    this.status.read(fields);
  }

  onData(chunk: Buffer): void {
    // After a failure the bytes still arriving may start mid-message: none of them is read.
    if (this.failure) return;
    const responses: WatchResponse[] = [];
    try {
      for (const message of this.messages.push(chunk)) responses.push(decodeWatchResponse(message));
    } catch (err) {
      // Nothing more on this stream can be trusted: end it, and the watches resume elsewhere.
      this.failure = err as Error;
      this.stream?.cancel(H2Error.INTERNAL_ERROR);
      this.closed({ unsent: false });
      return;
    }
    for (const res of responses) this.emit('data', res);
  }

  onClose(end: StreamEnd): void {
    this.closed(end);
  }

  private closed(end: StreamEnd): void {
    if (this.ended) return;
    this.ended = true;
    const { code, details } = this.status;
    if (code === 0 && !this.failure) this.emit('end');
    else if (code !== undefined && !this.failure) this.emit('error', grpcError(code, details));
    else this.emit('error', grpcError(UNAVAILABLE, `Watch stream closed: ${(this.failure ?? end.error)?.message ?? `RST_STREAM code ${end.rstCode ?? 0}`}`));
  }
}

/**
 * The messages of a gRPC stream from its DATA chunks: a message may span many chunks (a watch
 * response of large values), and a chunk may hold several messages. A message's bytes are joined
 * once, when its last chunk arrives, however many chunks it took.
 */
export class GrpcMessages {
  private chunks: Buffer[] = [];
  private size = 0;

  /** The messages `chunk` completes, without their 5-byte prefix; throws on a compressed one. */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.size += chunk.length;
    const done: Buffer[] = [];
    while (this.size >= 5) {
      const head = this.chunks[0]!.length >= 5 ? this.chunks[0]! : this.join();
      const length = head.readUInt32BE(1);
      if (this.size < 5 + length) break;
      if (head[0] !== 0) throw new Error('compressed gRPC message');
      const data = head.length >= 5 + length ? head : this.join();
      done.push(data.subarray(5, 5 + length));
      this.size -= 5 + length;
      if (data.length > 5 + length) this.chunks[0] = data.subarray(5 + length);
      else this.chunks.shift();
    }
    return done;
  }

  private join(): Buffer {
    const all = Buffer.concat(this.chunks, this.size);
    this.chunks = [all];
    return all;
  }
}
