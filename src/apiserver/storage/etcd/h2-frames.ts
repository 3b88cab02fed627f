/**
 * HTTP/2 frames (RFC 9113 §4, §6) as the etcd client writes and reads them: the 9-octet header,
 * the frame types a gRPC client meets, their flags and error codes, and a reader that cuts a
 * connection's bytes into frames however the socket split them.
 */

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** Error codes (§7). */
export const H2Error = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
} as const;

/** The protocol's defaults (§6.5.2), which hold until the peer's SETTINGS say otherwise. */
export const DEFAULT_WINDOW = 65_535;
export const DEFAULT_MAX_FRAME = 16_384;
export const MAX_WINDOW = 2 ** 31 - 1;

export interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** A frame's 9-octet header. */
export function frameHeader(type: number, flags: number, stream: number, length: number): Buffer {
  const head = Buffer.allocUnsafe(9);
  head.writeUIntBE(length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return head;
}

/** A whole frame with its payload, in one buffer. */
export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(stream, 5);
  payload.copy(out, 9);
  return out;
}

/** A header block as HEADERS and, past `maxFrame` octets, CONTINUATION frames. */
export function headerFrames(stream: number, block: Buffer, maxFrame: number, endStream: boolean): Buffer[] {
  const frames: Buffer[] = [];
  for (let at = 0; frames.length === 0 || at < block.length; ) {
    const piece = block.subarray(at, at + maxFrame);
    at += piece.length;
    const flags = (at >= block.length ? Flag.END_HEADERS : 0) | (frames.length === 0 && endStream ? Flag.END_STREAM : 0);
    frames.push(frame(frames.length === 0 ? FrameType.HEADERS : FrameType.CONTINUATION, flags, stream, piece));
  }
  return frames;
}

export function settingsFrame(settings: [id: number, value: number][]): Buffer {
  const payload = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FrameType.SETTINGS, 0, 0, payload);
}

export function windowUpdateFrame(stream: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FrameType.WINDOW_UPDATE, 0, stream, payload);
}

export function rstStreamFrame(stream: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(code, 0);
  return frame(FrameType.RST_STREAM, 0, stream, payload);
}

export function goawayFrame(lastStream: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(lastStream, 0);
  payload.writeUInt32BE(code, 4);
  return frame(FrameType.GOAWAY, 0, 0, payload);
}

/**
 * A frame's payload without its padding (§6.1, §6.2): the PADDED flag's length octet and the
 * trailing pad, and for HEADERS the PRIORITY flag's 5 octets. Throws when the padding does not fit.
 */
export function unpadded(f: Frame): Buffer {
  let start = 0;
  let end = f.payload.length;
  if (f.flags & Flag.PADDED) {
    if (end < 1) throw new Error('HTTP/2: padded frame without a pad length');
    end -= f.payload[0]!;
    start = 1;
  }
  if (f.type === FrameType.HEADERS && f.flags & Flag.PRIORITY) start += 5;
  if (end < start) throw new Error('HTTP/2: padding longer than the frame');
  return f.payload.subarray(start, end);
}

/** Cuts a byte stream into frames; a frame longer than `maxFrame` is a FRAME_SIZE_ERROR (thrown). */
export class FrameReader {
  private pending: Buffer | undefined;

  constructor(private readonly maxFrame: number) {}

  /** The frames `chunk` completes, in order; their payloads are views of the received bytes. */
  push(chunk: Buffer): Frame[] {
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    const frames: Frame[] = [];
    let pos = 0;
    while (data.length - pos >= 9) {
      const length = data.readUIntBE(pos, 3);
      if (length > this.maxFrame) throw new Error(`HTTP/2: frame of ${length} octets, more than the ${this.maxFrame} allowed`);
      if (data.length - pos < 9 + length) break;
      frames.push({
        type: data[pos + 3]!,
        flags: data[pos + 4]!,
        stream: data.readUInt32BE(pos + 5) & 0x7fffffff,
        payload: data.subarray(pos + 9, pos + 9 + length),
      });
      pos += 9 + length;
    }
    if (pos < data.length) {
      data = data.subarray(pos);
      this.pending = data;
    }
    return frames;
  }
}
