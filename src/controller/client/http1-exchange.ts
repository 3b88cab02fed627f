/**
 * One request of http1.ts and its reply: what the caller is handed (a reply read in full, or a 2xx
 * reply whose body streams into a sink), an abort signal's wiring, and a second start on another
 * connection when the first was closed unanswered.
 */
import type { IncomingHttpHeaders } from 'node:http';

export interface Reply {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The whole body; empty when a sink took it (a streamed 2xx reply). */
  body: Buffer;
  /** Ends a streamed reply early (its sink then sees `end` with an AbortError); a no-op otherwise. */
  stop(): void;
}

/** Where a streamed 2xx reply's body goes, chunk by chunk. */
export interface BodySink {
  data(chunk: Buffer): void;
  /** Once: without an error when the body ended, with one when it failed or was stopped. */
  end(err?: Error): void;
}

export interface Http1Request {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Longest silence of the server while the request is open before it fails (ms; 0 = none, for watches). */
  bodyTimeoutMs?: number;
}

/** The connection an exchange is sent on. */
export interface Carrier {
  send(ex: Exchange): void;
  /** Ends `ex` with `err` and drops the connection. */
  abort(ex: Exchange, err: Error): void;
}

const EMPTY = Buffer.alloc(0);

/** The abort signal's reason, or an AbortError as fetch gives. */
export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}

/** One request and its reply; `conn` is the connection carrying it. */
export class Exchange {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  /** Bytes of the reply were seen (a failure after that cannot be retried on another connection). */
  answered = false;
  conn: Carrier | undefined;
  private streaming = false;
  private done = false;
  private readonly chunks: Buffer[] = [];
  private readonly onAbort = (): void => this.abort(abortError(this.signal));

  constructor(
    private readonly acquire: () => Carrier,
    readonly req: Http1Request,
    private readonly signal: AbortSignal | undefined,
    private readonly sink: BodySink | undefined,
    private readonly settle: { resolve: (r: Reply) => void; reject: (e: Error) => void },
  ) {
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Sends the request on a free connection, or a new one. */
  start(): void {
    this.answered = false;
    this.conn = this.acquire();
    this.conn.send(this);
  }

  abort(err: Error): void {
    if (this.conn) this.conn.abort(this, err);
    else this.finish(err);
  }

  head(statusCode: number, headers: IncomingHttpHeaders): void {
    this.statusCode = statusCode;
    this.headers = headers;
    if (this.sink && statusCode >= 200 && statusCode <= 299) {
      this.streaming = true;
      this.settle.resolve({ statusCode, headers, body: EMPTY, stop: () => this.abort(abortError(undefined)) });
    }
  }

  data(chunk: Buffer): void {
    if (this.streaming) this.sink?.data(chunk);
    else this.chunks.push(chunk);
  }

  finish(err?: Error): void {
    if (this.done) return;
    this.done = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    if (this.streaming) this.sink?.end(err);
    else if (err) this.settle.reject(err);
    else {
      const body = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
      this.settle.resolve({ statusCode: this.statusCode, headers: this.headers, body, stop: () => {} });
    }
  }
}
