/**
 * Header blocks as they arrive (RFC 9113 §4.3): a HEADERS frame, then CONTINUATION frames of the same
 * stream up to END_HEADERS with no other frame between them, at most MAX_HEADER_BLOCK compressed
 * octets, decoded once complete by the connection's one HPACK decoder. A block is decoded even for a
 * stream already reset: it changes the decoder's dynamic table either way.
 */
import { Flag, type Frame, FrameType, unpadded } from './h2-frames.js';
import { type HeaderField, HpackDecoder } from './hpack.js';

/** The most header block (compressed, all its frames) we read for one response: etcd's are tiny. */
const MAX_HEADER_BLOCK = 1 << 20;

export interface HeaderBlock {
  stream: number;
  endStream: boolean;
  fields: HeaderField[];
}

export class HeaderBlockReader {
  private readonly decoder = new HpackDecoder();
  private open: { stream: number; endStream: boolean; fragments: Buffer[]; size: number } | undefined;

  /** A block is open: the next frame must continue it. */
  get continuing(): boolean {
    return this.open !== undefined;
  }

  /** A HEADERS or CONTINUATION frame; the block, once END_HEADERS completes it. Throws at a protocol error. */
  read(f: Frame): HeaderBlock | undefined {
    let fragment: Buffer;
    if (f.type === FrameType.HEADERS) {
      if (f.stream === 0) throw new Error('HTTP/2: HEADERS on stream 0');
      this.open = { stream: f.stream, endStream: (f.flags & Flag.END_STREAM) !== 0, fragments: [], size: 0 };
      fragment = unpadded(f);
    } else {
      if (!this.open || this.open.stream !== f.stream) throw new Error('HTTP/2: unexpected CONTINUATION');
      fragment = f.payload;
    }
    const block = this.open;
    block.fragments.push(fragment);
    if ((block.size += fragment.length) > MAX_HEADER_BLOCK) throw new Error('HTTP/2: header block too large');
    if (!(f.flags & Flag.END_HEADERS)) return undefined;
    this.open = undefined;
    const { stream, endStream, fragments } = block;
    return { stream, endStream, fields: this.decoder.decode(fragments.length === 1 ? fragments[0]! : Buffer.concat(fragments)) };
  }
}
