/**
 * The protobuf wire format of the etcd KV and Lease messages the store sends and reads (etcd's
 * rpc.proto and kv.proto, field numbers as there), written by hand: a handful of messages, encoded
 * straight into the gRPC frame and decoded into plain objects, without a reflection layer per call
 * (the wire format itself: proto-wire.ts).
 * Field names are etcd's (snake_case, as its JSON gateway and the etcd3 package show them).
 * Revisions and counts are numbers (etcd's revisions stay far below 2^53); a lease ID uses all 64
 * bits, so it travels as a decimal string. Fields the store never reads are skipped when decoding.
 */
import { ProtoReader, ProtoWriter } from './proto-wire.js';

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
  /** The value's octets, or text stored as its UTF-8. */
  value: Buffer | string;
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

export function encodeRange(req: RangeRequest, w = new ProtoWriter()): ProtoWriter {
  w.bytes(1, req.key);
  if (req.range_end) w.bytes(2, req.range_end);
  if (req.limit) w.varint(3, req.limit);
  if (req.revision) w.varint(4, req.revision);
  if (req.count_only) w.varint(9, 1);
  return w;
}

export function encodeTxn(req: TxnRequest, w = new ProtoWriter(txnCapacity(req))): ProtoWriter {
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

/** About the octets a transaction encodes to: its values, its keys (each op names one) and some for the rest. */
function txnCapacity(req: TxnRequest): number {
  let n = 256;
  for (const c of req.compare) n += 16 + c.key.length;
  for (const op of [...req.success, ...req.failure]) {
    const put = op.request_put;
    n += 16 + (put ? put.key.length + put.value.length : (op.request_range ?? op.request_delete_range)?.key.length ?? 0);
  }
  return n;
}

function encodeOp(op: RequestOp, w: ProtoWriter): void {
  if (op.request_range) {
    const range = op.request_range;
    w.message(1, () => encodeRange(range, w));
  } else if (op.request_put) {
    const put = op.request_put;
    w.message(2, () => {
      w.bytes(1, put.key);
      if (typeof put.value === 'string') w.text(2, put.value);
      else w.bytes(2, put.value);
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
