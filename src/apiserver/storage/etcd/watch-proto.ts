/**
 * etcd's Watch messages (rpc.proto's WatchRequest and WatchResponse, kv.proto's Event) on the wire,
 * as etcd-proto.ts does for the KV calls: revisions as numbers, a watch id (an int64 that etcd sets
 * to -1 for a create it refused) as a decimal string.
 */
import { type KeyValue, readHeader, readKv, type ResponseHeader } from './etcd-proto.js';
import { ProtoReader, ProtoWriter } from './proto-wire.js';

export interface WatchRequest {
  create_request?: {
    key: Buffer;
    range_end: Buffer;
    /** The first revision to deliver. */
    start_revision: number;
    progress_notify: boolean;
    prev_kv: boolean;
    /** Lets etcd split a large revision's events over several responses. */
    fragment: boolean;
  };
  cancel_request?: { watch_id: string };
}

export interface Event {
  type: 'Put' | 'Delete';
  kv: KeyValue;
  prev_kv?: KeyValue;
}

export interface WatchResponse {
  header?: ResponseHeader;
  watch_id: string;
  created: boolean;
  canceled: boolean;
  compact_revision: number;
  cancel_reason: string;
  fragment: boolean;
  events: Event[];
}

export function encodeWatchRequest(req: WatchRequest): ProtoWriter {
  const w = new ProtoWriter();
  const create = req.create_request;
  if (create) {
    w.message(1, () => {
      w.bytes(1, create.key);
      w.bytes(2, create.range_end);
      if (create.start_revision) w.varint(3, create.start_revision);
      if (create.progress_notify) w.varint(4, 1);
      if (create.prev_kv) w.varint(6, 1);
      if (create.fragment) w.varint(8, 1);
    });
  } else if (req.cancel_request) {
    const id = req.cancel_request.watch_id;
    w.message(2, () => {
      if (id !== '0') w.int64(1, id);
    });
  }
  return w;
}

function readEvent(r: ProtoReader): Event {
  let type: Event['type'] = 'Put';
  let kv: KeyValue | undefined;
  let prev: KeyValue | undefined;
  for (let f; (f = r.next()); ) {
    if (f[0] === 1) type = r.varint() === 1 ? 'Delete' : 'Put';
    else if (f[0] === 2) kv = readKv(r.sub());
    else if (f[0] === 3) prev = readKv(r.sub());
    else r.skip(f[1]);
  }
  if (!kv) throw new Error('watch event without a key-value');
  return prev ? { type, kv, prev_kv: prev } : { type, kv };
}

export function decodeWatchResponse(buf: Buffer): WatchResponse {
  const r = new ProtoReader(buf, 0, buf.length);
  const res: WatchResponse = { watch_id: '0', created: false, canceled: false, compact_revision: 0, cancel_reason: '', fragment: false, events: [] };
  for (let f; (f = r.next()); ) {
    switch (f[0]) {
      case 1: res.header = readHeader(r.sub()); break;
      case 2: res.watch_id = r.int64(); break;
      case 3: res.created = r.varint() !== 0; break;
      case 4: res.canceled = r.varint() !== 0; break;
      case 5: res.compact_revision = r.varint(); break;
      case 6: res.cancel_reason = r.bytes().toString(); break;
      case 7: res.fragment = r.varint() !== 0; break;
      case 11: res.events.push(readEvent(r.sub())); break;
      default: r.skip(f[1]);
    }
  }
  return res;
}
