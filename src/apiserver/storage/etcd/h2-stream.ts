/**
 * One stream of an HTTP/2 client connection (h2-connection.ts): the request's header fields, the
 * DATA it still has to send (held while the peer's windows are closed), and how it ended, reported
 * to its handler exactly once.
 */
import type { H2Connection } from './h2-connection.js';
import type { HeaderField } from './hpack.js';

/** How a stream ended. */
export interface StreamEnd {
  /** The RST_STREAM code, when the stream was reset (REFUSED_STREAM also for GOAWAY's unprocessed streams). */
  rstCode?: number;
  /** Why the stream ended abnormally: the connection failed or went away. */
  error?: Error;
  /** Nothing of the stream reached the peer's application: safe to send again. */
  unsent: boolean;
}

export interface StreamHandler {
  /** Response headers, then trailers (when `endStream`), each as one header list. */
  onHeaders(fields: HeaderField[], endStream: boolean): void;
  onData(data: Buffer): void;
  /** Once, last: the peer ended the stream (trailers or END_STREAM), it was reset, or the connection ended. */
  onClose(end: StreamEnd): void;
}

export class H2Stream {
  /** 0 until the stream is opened (a stream may wait for the peer's concurrency limit). */
  id = 0;
  sendWindow = 0;
  /** DATA octets received and not yet acknowledged with WINDOW_UPDATE. */
  received = 0;
  localEnded = false;
  remoteEnded = false;
  endQueued = false;
  private queue: Buffer[] = [];
  private done = false;

  constructor(
    private readonly connection: H2Connection,
    /** The request's header fields: `fields` (the same array call after call, for a method's constant ones), then `extra`. */
    readonly fields: readonly HeaderField[],
    readonly handler: StreamHandler,
    readonly extra: readonly HeaderField[] = [],
  ) {}

  /** Queues request data (and with `end`, the end of the request) and sends what the windows allow. */
  write(data: Buffer, end = false): void {
    if (this.done || this.endQueued) return;
    if (data.length > 0) this.queue.push(data);
    this.endQueued = end;
    this.connection.pump(this);
  }

  /** Octets waiting for the peer's windows. */
  queued(): number {
    let n = 0;
    for (const b of this.queue) n += b.length;
    return n;
  }

  /** Resets the stream (CANCEL by default); its handler hears nothing more. */
  cancel(code = 0x8): void {
    if (this.done) return;
    this.done = true;
    this.connection.reset(this, code);
  }

  /**
   * Sends queued data in chunks of at most `max` octets, each through `send`, which answers the next
   * chunk's limit; the last chunk carries END_STREAM when the request has ended.
   */
  flush(max: number, send: (data: Buffer, end: boolean) => number): void {
    while (!this.localEnded) {
      const head = this.queue[0];
      if (!head) {
        if (this.endQueued) {
          this.localEnded = true;
          send(Buffer.alloc(0), true);
        }
        return;
      }
      if (max <= 0) return;
      const chunk = head.length <= max ? head : head.subarray(0, max);
      if (chunk === head) this.queue.shift();
      else this.queue[0] = head.subarray(max);
      const end = this.endQueued && this.queue.length === 0;
      if (end) this.localEnded = true;
      max = send(chunk, end);
    }
  }

  isDone(): boolean {
    return this.done;
  }

  /** The connection's report of the stream's end; only the first counts. */
  closed(end: StreamEnd): void {
    if (this.done) return;
    this.done = true;
    this.handler.onClose(end);
  }
}
