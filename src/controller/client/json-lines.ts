/**
 * Reads a watch body: newline-delimited compact JSON (one event per line, apiserver.md §2.3) as it
 * streams in. Lines are split on the raw bytes (a '\n' byte never occurs inside a multi-byte UTF-8
 * character), so a chunk is decoded once, a line split across chunks is joined before decoding, and
 * each complete line goes to JSON.parse on its own.
 */
import type { BodySink } from './http1.js';

const NEWLINE = 0x0a;
/**
 * Longest watch event accepted. The API server takes objects of at most 3 MiB (its request body
 * limit); an event wraps one object, so a longer line is a broken or hostile stream, and buffering
 * it without bound would exhaust memory.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Splits a byte stream into lines; a trailing partial line waits for the next chunk. */
export class LineSplitter {
  private partial: Buffer[] = [];
  private partialBytes = 0;

  /**
   * Calls `onLine` for each line completed by `chunk` (without the '\n'; empty lines skipped).
   * Throws when an unfinished line grows past `maxLineBytes`.
   */
  push(chunk: Buffer, onLine: (line: string) => void, maxLineBytes = MAX_LINE_BYTES): void {
    let start = 0;
    let nl = chunk.indexOf(NEWLINE);
    while (nl !== -1) {
      let line: Buffer = chunk.subarray(start, nl);
      if (this.partial.length > 0) {
        this.partial.push(line);
        line = Buffer.concat(this.partial);
        this.partial = [];
        this.partialBytes = 0;
      }
      if (line.length > 0) onLine(line.toString('utf8'));
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) {
      this.partial.push(chunk.subarray(start));
      this.partialBytes += chunk.length - start;
      if (this.partialBytes > maxLineBytes) throw new Error(`watch event longer than ${maxLineBytes} bytes`);
    }
  }

  /** Bytes of an unfinished line (a stream should end on a '\n'). */
  pendingBytes(): number {
    return this.partialBytes;
  }
}

export interface JsonLinesHandlers {
  onValue(value: unknown): void;
  /** Once: at the end of the stream or on stop (no argument), or on a read or parse error. */
  onEnd(err?: unknown): void;
}

/**
 * A body sink (dispatch.ts) feeding each JSON line to `onValue` until the stream ends. A line that is
 * not JSON or an unfinished last line ends the stream with an error: skipping it would silently lose
 * an event. `stop` (or such an error) closes the stream through the function given to `attach` and
 * reports a clean end, unless it ended already.
 */
export class JsonLinesReader implements BodySink {
  private readonly splitter = new LineSplitter();
  private ended = false;
  private close: (() => void) | undefined;
  private readonly onLine = (line: string): void => {
    if (this.ended) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      this.finish(err);
      return;
    }
    this.h.onValue(value);
  };

  constructor(private readonly h: JsonLinesHandlers) {}

  /** How to close the stream once the reader ends first (the reply's `stop`). */
  attach(close: () => void): void {
    this.close = close;
    if (this.ended) close();
  }

  data(chunk: Buffer): void {
    if (this.ended) return;
    try {
      this.splitter.push(chunk, this.onLine);
    } catch (err) {
      this.finish(err);
    }
  }

  end(err?: Error): void {
    this.finish(err ?? (this.splitter.pendingBytes() > 0 ? new Error('watch stream ended inside an event') : undefined));
  }

  stop(): void {
    this.finish();
  }

  private finish(err?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.close?.();
    this.h.onEnd(err);
  }
}
