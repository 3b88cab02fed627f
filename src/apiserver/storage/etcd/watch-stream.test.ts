/**
 * The watch multiplexer against a scripted etcd: what it sends for each watch, and how it takes
 * responses etcd should never send (an unknown watch id, a cancel or a `created` for a watch it
 * never made), fragments, a compaction reported while resuming, and a stream reset, which moves
 * every watch to the next member from where it was.
 */
import { EventEmitter } from 'node:events';
import type { Event, WatchRequest, WatchResponse } from './watch-proto.js';
import { WatchStream, type WatchSink } from './watch-stream.js';
import type { WatchCall, WatchTransport } from './watch-transport.js';

class FakeCall extends EventEmitter implements WatchCall {
  readonly sent: WatchRequest[] = [];
  cancelled = false;
  constructor(readonly endpoint: string) {
    super();
  }
  write(req: WatchRequest): void {
    this.sent.push(req);
  }
  cancel(): void {
    this.cancelled = true;
    this.emit('error', new Error('CANCELLED'));
  }
  reply(res: Partial<WatchResponse> & { revision?: number }): void {
    const { revision = 100, ...rest } = res;
    this.emit('data', { header: { revision }, watch_id: '0', created: false, canceled: false, compact_revision: 0, cancel_reason: '', fragment: false, events: [], ...rest });
  }
  creates(): { key: string; start: string }[] {
    return this.sent.filter((r) => r.create_request).map((r) => ({ key: String(r.create_request!.key), start: String(r.create_request!.start_revision) }));
  }
  cancels(): string[] {
    return this.sent.filter((r) => r.cancel_request).map((r) => String(r.cancel_request!.watch_id));
  }
}

class FakeTransport implements WatchTransport {
  readonly calls: FakeCall[] = [];
  private n = 0;
  constructor(private readonly endpoints = ['m0', 'm1', 'm2']) {}
  open(): { call: WatchCall; endpoint: string } {
    const endpoint = this.endpoints[this.n++ % this.endpoints.length]!;
    const call = new FakeCall(endpoint);
    this.calls.push(call);
    return { call, endpoint };
  }
  close(): void {}
  get last(): FakeCall {
    return this.calls[this.calls.length - 1]!;
  }
}

function put(key: string, rev: number): Event {
  const kv = { key: Buffer.from(key), value: Buffer.from('{}'), create_revision: rev, mod_revision: rev, version: 1 };
  return { type: 'Put', kv };
}

interface Seen {
  events: number[];
  progress: number[];
  ended: { compactRevision?: number; message: string }[];
}

function sink(): WatchSink & { seen: Seen } {
  const seen: Seen = { events: [], progress: [], ended: [] };
  return {
    seen,
    events: (evs) => seen.events.push(...evs.map((e) => Number(e.kv.mod_revision))),
    progress: (rev) => seen.progress.push(rev),
    ended: (reason) => seen.ended.push(reason),
  };
}

const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(done()).toBe(true);
};

describe('WatchStream', () => {
  let transport: FakeTransport;
  let stream: WatchStream;
  let observed: number[];
  beforeEach(() => {
    transport = new FakeTransport();
    observed = [];
    stream = new WatchStream(transport, { observe: (rev) => observed.push(rev) });
  });
  afterEach(() => stream.close());

  /** Starts a watch and answers its create with `id`. */
  const created = (key: string, from: number, id: string): WatchSink & { seen: Seen } & { stop(): void } => {
    const s = sink();
    const handle = stream.watch(Buffer.from(key), Buffer.from(`${key}~`), from, s);
    transport.last.reply({ watch_id: id, created: true });
    return Object.assign(s, handle);
  };

  it('multiplexes every watch on one stream, creating one at a time in order', () => {
    const a = sink();
    const b = sink();
    stream.watch(Buffer.from('/a'), Buffer.from('/a~'), 10, a);
    stream.watch(Buffer.from('/b'), Buffer.from('/b~'), 20, b, true);
    expect(transport.calls).toHaveLength(1);
    const call = transport.last;
    // The second create waits for etcd to answer the first: `created` responses carry no key.
    expect(call.creates()).toEqual([{ key: '/a', start: '11' }]);
    call.reply({ watch_id: '7', created: true });
    expect(call.creates()).toEqual([{ key: '/a', start: '11' }, { key: '/b', start: '21' }]);
    expect(call.sent[0]!.create_request).toMatchObject({ prev_kv: false, progress_notify: true, fragment: true });
    expect(call.sent[1]!.create_request).toMatchObject({ prev_kv: true });
    call.reply({ watch_id: '8', created: true });

    call.reply({ watch_id: '8', events: [put('/b/x', 21)], revision: 21 });
    call.reply({ watch_id: '7', events: [put('/a/x', 22), put('/a/y', 23)], revision: 23 });
    expect([a.seen.events, b.seen.events]).toEqual([[22, 23], [21]]);
    expect(observed[observed.length - 1]).toBe(23);
  });

  it('cancels a watch id it does not hold once, and keeps serving the others', () => {
    const a = created('/a', 10, '1');
    const call = transport.last;
    call.reply({ watch_id: '99', events: [put('/a/ghost', 11)] });
    call.reply({ watch_id: '99', events: [put('/a/ghost', 12)] });
    expect(call.cancels()).toEqual(['99']);
    call.reply({ watch_id: '1', events: [put('/a/real', 13)] });
    expect(a.seen.events).toEqual([13]);
    expect(call.cancelled).toBe(false);
  });

  it('drops a cancel for a watch it never made, and cancels a `created` nobody asked for', () => {
    const a = created('/a', 10, '1');
    const call = transport.last;
    call.reply({ watch_id: '42', canceled: true, cancel_reason: 'no such watch' });
    call.reply({ watch_id: '43', created: true });
    expect(call.cancels()).toEqual(['43']);
    call.reply({ watch_id: '1', events: [put('/a/x', 11)] });
    expect([a.seen.events, a.seen.ended]).toEqual([[11], []]);
  });

  it('joins fragments into one delivery', () => {
    const a = created('/a', 10, '1');
    const call = transport.last;
    call.reply({ watch_id: '1', fragment: true, events: [put('/a/1', 11)] });
    call.reply({ watch_id: '1', fragment: true, events: [put('/a/2', 11)] });
    expect(a.seen.events).toEqual([]);
    call.reply({ watch_id: '1', events: [put('/a/3', 11)] });
    expect(a.seen.events).toEqual([11, 11, 11]);
  });

  it('takes a response without events as progress, never moving back', () => {
    const a = created('/a', 10, '1');
    transport.last.reply({ watch_id: '1', revision: 30 });
    transport.last.reply({ watch_id: '1', revision: 25 });
    expect(a.seen.progress).toEqual([30]);
  });

  it('resumes every watch on the next member after a reset, from the revision after the last delivered', async () => {
    const a = created('/a', 10, '1');
    const b = created('/b', 20, '2');
    const first = transport.last;
    first.reply({ watch_id: '1', events: [put('/a/x', 15)] });
    first.reply({ watch_id: '2', revision: 40 });
    first.emit('error', new Error('UNAVAILABLE: connection reset'));
    await until(() => transport.calls.length === 2);
    const second = transport.last;
    expect([first.endpoint, second.endpoint]).toEqual(['m0', 'm1']);
    expect(second.creates()).toEqual([{ key: '/a', start: '16' }]);
    second.reply({ watch_id: '0', created: true });
    expect(second.creates()).toEqual([{ key: '/a', start: '16' }, { key: '/b', start: '41' }]);
    second.reply({ watch_id: '1', created: true });
    // A member replays what the old stream had already delivered: it is not delivered twice.
    second.reply({ watch_id: '0', events: [put('/a/x', 15), put('/a/y', 16)] });
    second.reply({ watch_id: '1', events: [put('/b/x', 41)] });
    expect([a.seen.events, b.seen.events]).toEqual([[15, 16], [41]]);
    // The old stream's late responses are ignored.
    first.reply({ watch_id: '1', events: [put('/a/late', 17)] });
    expect(a.seen.events).toEqual([15, 16]);
  });

  it('reports a compaction found while resuming to that watch only', async () => {
    const a = created('/a', 10, '1');
    const b = created('/b', 50, '2');
    transport.last.emit('end');
    await until(() => transport.calls.length === 2);
    const call = transport.last;
    call.reply({ watch_id: '5', created: true });
    call.reply({ watch_id: '5', canceled: true, compact_revision: 30, cancel_reason: 'mvcc: required revision has been compacted' });
    call.reply({ watch_id: '6', created: true });
    call.reply({ watch_id: '6', events: [put('/b/x', 51)] });
    expect(a.seen.ended).toEqual([{ compactRevision: 30, message: 'mvcc: required revision has been compacted' }]);
    expect([b.seen.events, b.seen.ended]).toEqual([[51], []]);
  });

  it('keeps retrying with a backoff while no member answers, and leaves no stream once every watch stopped', async () => {
    const a = created('/a', 10, '1');
    for (let i = 1; i <= 3; i++) {
      transport.last.emit('error', new Error('UNAVAILABLE: connection refused'));
      await until(() => transport.calls.length === i + 1);
    }
    expect(transport.calls.map((c) => c.endpoint)).toEqual(['m0', 'm1', 'm2', 'm0']);
    a.stop();
    expect(transport.last.cancelled).toBe(true);
    const calls = transport.calls.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(transport.calls.length).toBe(calls);
  });

  it('cancels a watch stopped before etcd created it', () => {
    const held = created('/held', 1, '0');
    const a = sink();
    const b = sink();
    stream.watch(Buffer.from('/a'), Buffer.from('/a~'), 1, a).stop();
    stream.watch(Buffer.from('/b'), Buffer.from('/b~'), 1, b);
    const call = transport.last;
    call.reply({ watch_id: '1', created: true });
    expect(call.cancels()).toEqual(['1']);
    call.reply({ watch_id: '2', created: true });
    call.reply({ watch_id: '2', events: [put('/b/x', 2)] });
    expect([a.seen.events, b.seen.events, held.seen.events, transport.calls.length]).toEqual([[], [2], [], 1]);
  });
});
