/**
 * The protobuf wire format of the etcd KV and Lease messages the store sends and reads (etcd's
 * rpc.proto and kv.proto, field numbers as there), written by hand: a handful of messages, encoded
 * straight into the gRPC frame and decoded into plain objects, without a reflection layer per call.
 * Field names are etcd's (snake_case, as its JSON gateway and the etcd3 package show them).
 * Revisions and counts are numbers (etcd's revisions stay far below 2^53); a lease ID uses all 64
 * bits, so it travels as a decimal string. Fields the store never reads are skipped when decoding.
 */

export interface KeyValue {
  key: Buffer;
  value: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
}

export interface ResponseHeader {
  revision: number;
}

export interface RangeRequest {
  key: Buffer;
  range_end?: Buffer;
  limit?: number;
  revision?: number;
  count_only?: boolean;
}

export interface PutRequest {
  key: Buffer;
  value: Buffer;
  /** A lease ID, as LeaseGrantResponse gives it. */
  lease?: string;
}

export interface DeleteRangeRequest {
  key: Buffer;
  prev_kv?: boolean;
}

export interface Compare {
  key: Buffer;
  target: 'Mod' | 'Version';
  result: 'Equal' | 'Greater';
  mod_revision?: number;
  version?: number;
}

export interface RequestOp {
  request_range?: RangeRequest;
  request_put?: PutRequest;
  request_delete_range?: DeleteRangeRequest;
}

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: KeyValue[];
  count: number;
}

export interface DeleteRangeResponse {
  prev_kvs: KeyValue[];
}

/** A transaction's result; each op's response is present for the op that produced it. */
export interface ResponseOp {
  response_range?: RangeResponse;
  response_delete_range?: DeleteRangeResponse;
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface LeaseGrantResponse {
  header: ResponseHeader;
  ID: string;
}

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

/** Appends fields to a growing buffer whose first 5 bytes are left for the gRPC message header. */
export class ProtoWriter {
  private buf = Buffer.allocUnsafe(512);
  private pos = 5;

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

export function encodeRange(req: RangeRequest, w = new ProtoWriter()): ProtoWriter {
  w.bytes(1, req.key);
  if (req.range_end) w.bytes(2, req.range_end);
  if (req.limit) w.varint(3, req.limit);
  if (req.revision) w.varint(4, req.revision);
  if (req.count_only) w.varint(9, 1);
  return w;
}

export function encodeTxn(req: TxnRequest, w = new ProtoWriter()): ProtoWriter {
  for (const c of req.compare) {
    w.message(1, () => {
      if (c.result === 'Greater') w.varint(1, 1);
      if (c.target === 'Mod') w.varint(2, 2);
      w.bytes(3, c.key);
      // A oneof member is written even when zero: "mod revision 0" is the compare of a create.
      if (c.target === 'Mod') w.varint(6, c.mod_revision ?? 0);
      else w.varint(4, c.version ?? 0);
    });
  }
  for (const [field, ops] of [[2, req.success] as const, [3, req.failure] as const]) {
    for (const op of ops) w.message(field, () => encodeOp(op, w));
  }
  return w;
}

function encodeOp(op: RequestOp, w: ProtoWriter): void {
  if (op.request_range) {
    const range = op.request_range;
    w.message(1, () => encodeRange(range, w));
  } else if (op.request_put) {
    const put = op.request_put;
    w.message(2, () => {
      w.bytes(1, put.key);
      w.bytes(2, put.value);
      if (put.lease !== undefined && put.lease !== '0') w.int64(3, put.lease);
    });
  } else if (op.request_delete_range) {
    const del = op.request_delete_range;
    w.message(3, () => {
      w.bytes(1, del.key);
      if (del.prev_kv) w.varint(3, 1);
    });
  }
}

export function encodeCompaction(revision: number): ProtoWriter {
  const w = new ProtoWriter();
  w.varint(1, revision);
  return w;
}

export function encodeLeaseGrant(ttl: number): ProtoWriter {
  const w = new ProtoWriter();
  w.varint(1, ttl);
  return w;
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

const EMPTY = Buffer.alloc(0);

export function readHeader(r: ProtoReader): ResponseHeader {
  const header = { revision: 0 };
  for (let f; (f = r.next()); ) {
    if (f[0] === 3) header.revision = r.varint();
    else r.skip(f[1]);
  }
  return header;
}

export function readKv(r: ProtoReader): KeyValue {
  const kv: KeyValue = { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 };
  for (let f; (f = r.next()); ) {
    switch (f[0]) {
      case 1: kv.key = r.bytes(); break;
      case 2: kv.create_revision = r.varint(); break;
      case 3: kv.mod_revision = r.varint(); break;
      case 4: kv.version = r.varint(); break;
      case 5: kv.value = r.bytes(); break;
      default: r.skip(f[1]);
    }
  }
  return kv;
}

function readRange(r: ProtoReader): RangeResponse {
  const res: RangeResponse = { header: { revision: 0 }, kvs: [], count: 0 };
  for (let f; (f = r.next()); ) {
    switch (f[0]) {
      case 1: res.header = readHeader(r.sub()); break;
      case 2: res.kvs.push(readKv(r.sub())); break;
      case 4: res.count = r.varint(); break;
      default: r.skip(f[1]);
    }
  }
  return res;
}

function readDeleteRange(r: ProtoReader): DeleteRangeResponse {
  const res: DeleteRangeResponse = { prev_kvs: [] };
  for (let f; (f = r.next()); ) {
    if (f[0] === 3) res.prev_kvs.push(readKv(r.sub()));
    else r.skip(f[1]);
  }
  return res;
}

function readOp(r: ProtoReader): ResponseOp {
  const op: ResponseOp = {};
  for (let f; (f = r.next()); ) {
    if (f[0] === 1) op.response_range = readRange(r.sub());
    else if (f[0] === 3) op.response_delete_range = readDeleteRange(r.sub());
    else r.skip(f[1]);
  }
  return op;
}

export function decodeRange(buf: Buffer): RangeResponse {
  return readRange(new ProtoReader(buf, 0, buf.length));
}

export function decodeTxn(buf: Buffer): TxnResponse {
  const r = new ProtoReader(buf, 0, buf.length);
  const res: TxnResponse = { header: { revision: 0 }, succeeded: false, responses: [] };
  for (let f; (f = r.next()); ) {
    switch (f[0]) {
      case 1: res.header = readHeader(r.sub()); break;
      case 2: res.succeeded = r.varint() !== 0; break;
      case 3: res.responses.push(readOp(r.sub())); break;
      default: r.skip(f[1]);
    }
  }
  return res;
}

export function decodeLeaseGrant(buf: Buffer): LeaseGrantResponse {
  const r = new ProtoReader(buf, 0, buf.length);
  const res: LeaseGrantResponse = { header: { revision: 0 }, ID: '0' };
  for (let f; (f = r.next()); ) {
    if (f[0] === 1) res.header = readHeader(r.sub());
    else if (f[0] === 2) res.ID = r.int64();
    else r.skip(f[1]);
  }
  return res;
}

/** Messages whose content the store does not read (CompactionResponse). */
export function decodeNothing(): void {}
