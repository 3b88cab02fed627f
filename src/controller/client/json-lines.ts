/**
 * Reads a watch body: newline-delimited compact JSON (one event per line, apiserver.md §2.3) as it
 * streams in. Lines are split on the raw bytes (a '\n' byte never occurs inside a multi-byte UTF-8
 * character), so a chunk is decoded once, a line split across chunks is joined before decoding, and
 * each complete line goes to JSON.parse on its own.
 */
import type { Readable } from 'node:stream';

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
 * Feeds each JSON line of `body` to `onValue` until the stream ends. A line that is not JSON or an
 * unfinished last line ends the stream with an error: skipping it would silently lose an event.
 * Returns a stop function: it closes the stream and reports a clean end, unless it ended already.
 */
export function readJsonLines(body: Readable, h: JsonLinesHandlers): () => void {
  const splitter = new LineSplitter();
  let ended = false;
  const end = (err?: unknown): void => {
    if (ended) return;
    ended = true;
    body.off('data', onData);
    body.on('error', () => {}); // destroy() may still emit one
    body.destroy();
    h.onEnd(err);
  };
  const onLine = (line: string): void => {
    if (ended) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      end(err);
      return;
    }
    h.onValue(value);
  };
  const onData = (chunk: Buffer): void => {
    try {
      splitter.push(chunk, onLine);
    } catch (err) {
      end(err);
    }
  };
  body.on('data', onData);
  body.once('error', (err) => end(err));
  body.once('end', () => end(splitter.pendingBytes() > 0 ? new Error('watch stream ended inside an event') : undefined));
  return () => end();
}
