/**
 * The HTTP side of one watch (upstream's WatchServer): a chunked response of compact JSON events,
 * one per line, with bookmarks and a clean end.
 *
 * Back-pressure, as kube-apiserver's cacher treats slow watchers: once the socket stops taking data,
 * events wait in a bounded queue; a watcher whose queue passes its budget is closed (`onOverflow`),
 * and its client resumes from the last revision it read. So a client that stops reading costs the
 * server at most that budget, never the whole event stream.
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
  private corked = false;
  /** The socket refused more (write returned false): events queue until it drains. */
  private blocked = false;
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private readonly bufferBytes: number;

  constructor(
    private readonly res: ServerResponse,
    private readonly opts: WatchStreamOptions,
  ) {
    this.bufferBytes = opts.bufferBytes ?? DEFAULT_WATCH_BUFFER_BYTES;
  }

  start(): void {
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    this.res.flushHeaders();
  }

  /**
   * One event line, as JSON.stringify of a WatchEvent gives it, reusing the stored object's
   * encoding. Initial events (the current state, or the history a resumed watch replays) are written
   * whatever the socket's state, as a list response would be; the budget applies to the live events
   * after them.
   */
  send(type: WatchEventType, object: object, initial = false): void {
    if (this.ended) return;
    const line = `{"type":${JSON.stringify(type)},"object":${compactJson(object)}}\n`;
    if (!this.blocked || initial) {
      this.write(line);
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

  /** Ends the response after what was already written; queued events are dropped. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.res.end();
  }

  private write(line: string): void {
    // Events published in one turn (a committed group of writes) leave in one socket write, not one
    // each. The socket is corked, not the response: a corked response holds chunks back without
    // backpressure or 'drain' (Node 24: a watcher that fell behind stalled for good), and its end()
    // left them unsent. end() uncorks the socket fully.
    if (!this.corked) {
      this.corked = true;
      this.res.socket?.cork();
      process.nextTick(() => this.uncork());
    }
    if (!this.res.write(line) && !this.blocked) {
      this.blocked = true;
      this.res.once('drain', () => this.drain());
    }
  }

  private uncork(): void {
    this.corked = false;
    // end() has already uncorked fully; the socket may serve another response by now.
    if (!this.ended) this.res.socket?.uncork();
  }

  private drain(): void {
    this.blocked = false;
    while (!this.ended && !this.blocked && this.queue.length > 0) {
      const line = this.queue.shift()!;
      this.queuedBytes -= line.length;
      this.write(line);
    }
  }

  private overflow(): void {
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.opts.onOverflow();
  }
}
