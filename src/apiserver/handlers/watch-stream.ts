/**
 * The HTTP side of one watch (upstream's WatchServer): a chunked response of compact JSON events,
 * one per line, with bookmarks and a clean end.
 *
 * Back-pressure, as kube-apiserver's cacher treats slow watchers: once the socket stops taking data,
 * events wait in a bounded queue; a watcher whose queue passes its budget is closed (`onOverflow`),
 * and its client resumes from the last revision it read. So a client that stops reading costs the
 * server at most that budget, never the whole event stream.
 *
 * The stream batches lines itself and never corks: after Node 20 a corked response keeps a chunked
 * body's writes in its own buffer, where write() compares only that buffer to the high-water mark
 * (true while the socket behind it holds megabytes), 'drain' waits for it to empty, and end() sends
 * the terminating chunk before it. Node's own per-turn socket cork under each write() still joins a
 * write's chunk framing into one socket write.
 */
import type { ServerResponse } from 'node:http';
import type { WatchEventType } from '../../api/meta.js';
import { compactJson } from '../../lib/frozen-json.js';

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** Bytes of events a watcher may fall behind by before it is closed. */
export const DEFAULT_WATCH_BUFFER_BYTES = 1 << 20;

export interface WatchStreamOptions {
  /** kind and apiVersion of bookmark objects. */
  kind: string;
  apiVersion: string;
  /** Queued bytes beyond which the watcher is closed (default DEFAULT_WATCH_BUFFER_BYTES). */
  bufferBytes?: number;
  /** Called once when the client fell behind the budget; the owner then ends the stream. */
  onOverflow(): void;
}

export class WatchStream {
  private ended = false;
  /** Lines of this turn not yet handed to the response: flushed at the end of the turn or once a socket buffer's worth. */
  private batch: string[] = [];
  private batchBytes = 0;
  private flushScheduled = false;
  /** The socket refused more (write returned false): live events queue until it drains. */
  private blocked = false;
  private queue: string[] = [];
  private queuedBytes = 0;
  private readonly bufferBytes: number;

  constructor(
    private readonly res: ServerResponse,
    private readonly opts: WatchStreamOptions,
  ) {
    this.bufferBytes = opts.bufferBytes ?? DEFAULT_WATCH_BUFFER_BYTES;
  }

  start(): void {
    // Chunked over HTTP/1.1 (no Content-Length); HTTP/2 forbids Transfer-Encoding and frames the body itself.
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    this.res.flushHeaders();
  }

  /** One event of an object that is not stored (a BOOKMARK, an ERROR's Status, a Table row), encoded here. */
  send(type: WatchEventType, object: object, initial = false): void {
    if (this.ended) return;
    this.sendLine(`{"type":${JSON.stringify(type)},"object":${compactJson(object)}}\n`, initial);
  }

  /**
   * One event line, as JSON.stringify of a WatchEvent gives it (codec/json-responses.ts builds those
   * of stored objects once for all their watchers). Initial events (the current state, or the history
   * a resumed watch replays) are written whatever the socket's state, as a list response would be;
   * the budget applies to the live events after them.
   */
  sendLine(line: string, initial = false): void {
    if (this.ended) return;
    if (!this.blocked || initial) {
      this.add(line);
      return;
    }
    this.queue.push(line);
    this.queuedBytes += line.length;
    if (this.queuedBytes > this.bufferBytes) this.overflow();
  }

  /** A BOOKMARK at `revision`; skipped while the client is behind (a later one says more). */
  bookmark(revision: number, initialEventsEnd: boolean): void {
    if (this.blocked && !initialEventsEnd) return;
    const metadata: Record<string, unknown> = { resourceVersion: String(revision), creationTimestamp: null };
    if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
    this.send('BOOKMARK', { kind: this.opts.kind, apiVersion: this.opts.apiVersion, metadata }, initialEventsEnd);
  }

  /** Ends the response after what was already sent; queued events are dropped. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue = [];
    this.queuedBytes = 0;
    const rest = this.take();
    if (rest === '') this.res.end();
    else this.res.end(rest);
  }

  /**
   * Events that arrive in one pass of the event loop (a committed group of writes, or on etcd the
   * watch responses of one socket read) leave in one chunk and one socket write, not one each; a
   * burst larger than a socket buffer is written as it grows, so that the socket's back-pressure
   * stops it early. The flush waits for the loop's check phase, not the end of the tick: etcd's
   * responses reach the store one callback each, and Node drains the tick queue after every
   * callback, so a tick-end flush wrote each event alone (its own TLS record and socket write).
   */
  private add(line: string): void {
    this.batch.push(line);
    this.batchBytes += line.length;
    if (this.batchBytes >= this.res.writableHighWaterMark) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.scheduledFlush);
    }
  }

  private readonly scheduledFlush = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  private flush(): void {
    if (this.ended || this.batch.length === 0) return;
    this.write(this.take());
  }

  private take(): string {
    const text = this.batch.join('');
    this.batch = [];
    this.batchBytes = 0;
    return text;
  }

  private write(text: string): void {
    if (!this.res.write(text) && !this.blocked) {
      this.blocked = true;
      this.res.once('drain', () => this.drain());
    }
  }

  /** Writes the queue in socket-buffer-sized chunks until the socket refuses more or the queue is empty. */
  private drain(): void {
    this.blocked = false;
    const limit = this.res.writableHighWaterMark;
    while (!this.ended && !this.blocked && this.queue.length > 0) {
      let n = 0;
      let bytes = 0;
      while (n < this.queue.length && (n === 0 || bytes < limit)) bytes += this.queue[n++]!.length;
      this.queuedBytes -= bytes;
      this.write(this.queue.splice(0, n).join(''));
    }
  }

  private overflow(): void {
    this.queue = [];
    this.queuedBytes = 0;
    this.opts.onOverflow();
  }
}
