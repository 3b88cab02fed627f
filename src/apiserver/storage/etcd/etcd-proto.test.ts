import { createRequire } from 'node:module';
import protobuf from 'protobufjs';
import { decodeLeaseGrant, decodeRange, decodeTxn, encodeCompaction, encodeLeaseGrant, encodeRange, encodeTxn } from './etcd-proto.js';
import type { ProtoWriter } from './proto-wire.js';
import { decodeWatchResponse, encodeWatchRequest } from './watch-proto.js';

// etcd's own definitions (the etcd3 package's copy of rpc.proto) are the reference for both directions.
const root = new protobuf.Root().loadSync(createRequire(import.meta.url).resolve('etcd3/proto/rpc.proto'), { keepCase: true });
const type = (name: string) => root.lookupType(`etcdserverpb.${name}`);
const asObject = { longs: String, enums: String, bytes: String, defaults: false, oneofs: false };
/** The message of a frame written by ProtoWriter, decoded by protobufjs. */
const read = (name: string, w: ProtoWriter) => {
  const frame = w.frame();
  expect([frame[0], frame.readUInt32BE(1)]).toEqual([0, frame.length - 5]);
  return type(name).toObject(type(name).decode(frame.subarray(5)), asObject);
};
const b64 = (s: string) => Buffer.from(s).toString('base64');
const big = Buffer.alloc(70_000, 7);
/** A value given as text: its UTF-8 is twice its length in characters, past what the writer reserved. */
const text = `{"a":"${'é'.repeat(40_000)}"}`;

describe("etcd's protobuf messages, as etcd's rpc.proto defines them", () => {
  it('encodes ranges, transactions, compactions and lease grants', () => {
    expect(read('RangeRequest', encodeRange({ key: Buffer.from('/a'), range_end: Buffer.from('/b'), limit: 500, revision: 2 ** 40 + 3, count_only: true }))).toEqual({
      key: b64('/a'),
      range_end: b64('/b'),
      limit: '500',
      revision: String(2 ** 40 + 3),
      count_only: true,
    });
    const txn = read(
      'TxnRequest',
      encodeTxn({
        compare: [
          { key: Buffer.from('k'), target: 'Mod', result: 'Equal', mod_revision: 0 },
          { key: Buffer.from('k'), target: 'Mod', result: 'Greater', mod_revision: 300 },
          { key: Buffer.from('c'), target: 'Version', result: 'Equal', version: 0 },
        ],
        success: [
          { request_put: { key: Buffer.from('k'), value: big, lease: '7587886259196011534' } },
          { request_delete_range: { key: Buffer.from('k'), prev_kv: true } },
          { request_put: { key: Buffer.from('t'), value: text } },
        ],
        failure: [{ request_range: { key: Buffer.from('k') } }],
      }),
    );
    // A oneof member is on the wire even when zero: a create's compare is "mod revision equals 0".
    expect(txn).toEqual({
      compare: [
        { key: b64('k'), target: 'Mod', mod_revision: '0' },
        { key: b64('k'), target: 'Mod', result: 'Greater', mod_revision: '300' },
        { key: b64('c'), version: '0' },
      ],
      success: [
        { request_put: { key: b64('k'), value: big.toString('base64'), lease: '7587886259196011534' } },
        { request_delete_range: { key: b64('k'), prev_kv: true } },
        { request_put: { key: b64('t'), value: b64(text) } },
      ],
      failure: [{ request_range: { key: b64('k') } }],
    });
    expect(read('CompactionRequest', encodeCompaction(123_456))).toEqual({ revision: '123456' });
    expect(read('LeaseGrantRequest', encodeLeaseGrant(3660))).toEqual({ TTL: '3660' });
  });

  it('decodes the responses, skipping what the store does not read', () => {
    const header = { cluster_id: '14841639068965178418', member_id: '10276657743932975437', revision: '9007199254740000', raft_term: '5' };
    const kv = (key: string, value: Buffer | string, rev: number) => ({ key: Buffer.from(key), value: Buffer.from(value), create_revision: rev - 1, mod_revision: rev, version: 2, lease: '-1' });
    const encoded = (name: string, message: object) => Buffer.from(type(name).encode(type(name).fromObject(message)).finish());

    const range = decodeRange(encoded('RangeResponse', { header, kvs: [kv('/a', '{"x":1}', 10), kv('/b', big, 11)], more: true, count: 7 }));
    expect(range).toEqual({
      header: { revision: 9007199254740000 },
      kvs: [
        { key: Buffer.from('/a'), value: Buffer.from('{"x":1}'), create_revision: 9, mod_revision: 10, version: 2 },
        { key: Buffer.from('/b'), value: big, create_revision: 10, mod_revision: 11, version: 2 },
      ],
      count: 7,
    });
    expect(decodeRange(encoded('RangeResponse', { header }))).toEqual({ header: { revision: 9007199254740000 }, kvs: [], count: 0 });

    const txn = decodeTxn(
      encoded('TxnResponse', {
        header,
        succeeded: true,
        responses: [{ response_put: { header, prev_kv: kv('/p', 'old', 3) } }, { response_delete_range: { header, deleted: 1, prev_kvs: [kv('/d', 'gone', 4)] } }, { response_range: { header, kvs: [kv('/r', 'v', 5)], count: 1 } }],
      }),
    );
    expect(txn.succeeded).toBe(true);
    expect(txn.responses.map((r) => [r.response_delete_range?.prev_kvs[0]?.value.toString(), r.response_range?.kvs[0]?.mod_revision])).toEqual([
      [undefined, undefined],
      ['gone', undefined],
      [undefined, 5],
    ]);
    expect(decodeTxn(encoded('TxnResponse', { header: { revision: 1 } }))).toEqual({ header: { revision: 1 }, succeeded: false, responses: [] });

    // Lease IDs use all 64 bits.
    expect(decodeLeaseGrant(encoded('LeaseGrantResponse', { header, ID: '7587886259196011534', TTL: 60 })).ID).toBe('7587886259196011534');
  });

  it("encodes watch creates and cancels, and decodes watch responses with their events", () => {
    const create = { key: Buffer.from('/a/'), range_end: Buffer.from('/a0'), start_revision: 41, progress_notify: true, prev_kv: true, fragment: true };
    expect(read('WatchRequest', encodeWatchRequest({ create_request: create }))).toEqual({
      create_request: { key: b64('/a/'), range_end: b64('/a0'), start_revision: '41', progress_notify: true, prev_kv: true, fragment: true },
    });
    expect(read('WatchRequest', encodeWatchRequest({ cancel_request: { watch_id: '7' } }))).toEqual({ cancel_request: { watch_id: '7' } });

    const header = { cluster_id: '14841639068965178418', revision: '52' };
    const kv = (key: string, rev: number) => ({ key: Buffer.from(key), value: Buffer.from('{}'), create_revision: 3, mod_revision: rev, version: 2 });
    const encoded = (message: object) => Buffer.from(type('WatchResponse').encode(type('WatchResponse').fromObject(message)).finish());
    expect(decodeWatchResponse(encoded({ header, watch_id: 3, fragment: true, events: [{ type: 'Delete', kv: kv('/a/x', 51), prev_kv: { ...kv('/a/x', 50), value: Buffer.from(big) } }, { kv: kv('/a/y', 52) }] }))).toEqual({
      header: { revision: 52 },
      watch_id: '3',
      created: false,
      canceled: false,
      compact_revision: 0,
      cancel_reason: '',
      fragment: true,
      events: [
        { type: 'Delete', kv: kv('/a/x', 51), prev_kv: { ...kv('/a/x', 50), value: big } },
        { type: 'Put', kv: kv('/a/y', 52) },
      ],
    });
    // A create etcd refused carries watch id -1.
    expect(decodeWatchResponse(encoded({ watch_id: -1, created: true, canceled: true, compact_revision: 9, cancel_reason: 'mvcc: required revision has been compacted' }))).toMatchObject({
      watch_id: '-1',
      created: true,
      canceled: true,
      compact_revision: 9,
      cancel_reason: 'mvcc: required revision has been compacted',
    });
  });

  it('refuses a truncated message instead of reading past it', () => {
    const whole = Buffer.from(type('RangeResponse').encode({ kvs: [{ key: Buffer.from('/a'), value: Buffer.from('v') }] }).finish());
    expect(() => decodeRange(whole.subarray(0, whole.length - 1))).toThrow(/truncated/);
  });
});
