/**
 * The protobuf wire format (varints, length-delimited fields, fixed-width fields skipped), written by
 * hand for the few etcd messages the store exchanges (etcd-proto.ts, watch-proto.ts, members.ts):
 * a writer that encodes straight into a gRPC frame, and a reader over one message's bytes.
 */

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

/** Appends fields to a growing buffer whose first 5 bytes are left for the gRPC message header. */
export class ProtoWriter {
  private buf: Buffer;
  private pos = 5;

  /** `capacity`: the octets the message is expected to take, so that a large one is not copied as it grows. */
  constructor(capacity = 512) {
    this.buf = Buffer.allocUnsafe(capacity + 5);
  }

  varint(field: number, value: number): void {
    this.tag(field, VARINT);
    this.raw(value);
  }

  /** A 64-bit integer given in decimal (a lease ID), two's complement as protobuf's int64. */
  int64(field: number, decimal: string): void {
    let v = BigInt.asUintN(64, BigInt(decimal));
    this.tag(field, VARINT);
    this.ensure(10);
    while (v > 0x7fn) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, LEN);
    this.raw(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** A length-delimited field of `value`'s UTF-8, encoded in place. */
  text(field: number, value: string): void {
    const length = Buffer.byteLength(value);
    this.tag(field, LEN);
    this.raw(length);
    this.ensure(length);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }

  /** Writes a nested message with `write`, then its length before it. */
  message(field: number, write: () => void): void {
    this.tag(field, LEN);
    const start = this.pos;
    write();
    const length = this.pos - start;
    const prefix = varintSize(length);
    this.ensure(prefix);
    this.buf.copyWithin(start + prefix, start, this.pos);
    const end = this.pos + prefix;
    this.pos = start;
    this.raw(length);
    this.pos = end;
  }

  /** The gRPC frame: uncompressed flag, message length, message. */
  frame(): Buffer {
    this.buf[0] = 0;
    this.buf.writeUInt32BE(this.pos - 5, 1);
    return this.buf.subarray(0, this.pos);
  }

  private tag(field: number, wire: number): void {
    this.raw(field * 8 + wire);
  }

  private raw(value: number): void {
    this.ensure(10);
    while (value > 0x7f) {
      this.buf[this.pos++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    this.buf[this.pos++] = value;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

function varintSize(n: number): number {
  let size = 1;
  while (n > 0x7f) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** Reads the fields of one message in `buf[pos, end)`. */
export class ProtoReader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  /** The next field's number and wire type, or undefined at the message's end. */
  next(): [field: number, wire: number] | undefined {
    if (this.pos >= this.end) return undefined;
    const key = this.varint();
    return [Math.floor(key / 8), key % 8];
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.pos >= this.end) throw new Error('truncated protobuf varint');
      const b = this.buf[this.pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
  }

  /** A varint as the decimal of a signed 64-bit integer. */
  int64(): string {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end) throw new Error('truncated protobuf varint');
      const b = this.buf[this.pos++]!;
      value |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asIntN(64, value).toString();
      shift += 7n;
    }
  }

  /** A length-delimited field's extent: [start, end). */
  span(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    this.pos += length;
    if (this.pos > this.end) throw new Error('truncated protobuf field');
    return [start, this.pos];
  }

  bytes(): Buffer {
    const [start, end] = this.span();
    return this.buf.subarray(start, end);
  }

  sub(): ProtoReader {
    const [start, end] = this.span();
    return new ProtoReader(this.buf, start, end);
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint();
    else if (wire === LEN) this.span();
    else if (wire === I64) this.pos += 8;
    else if (wire === I32) this.pos += 4;
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}
