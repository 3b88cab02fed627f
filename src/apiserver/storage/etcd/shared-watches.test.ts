import type { Event } from './watch-proto.js';
import { REPLAY_REVISIONS, type SharedEvent, SharedWatches } from './shared-watches.js';
import type { WatchSink } from './watch-stream.js';

/** The stream's side: each etcd watch asked for, with its sink and whether it was stopped. */
interface Opened {
  from: number;
  sink: WatchSink;
  prevKv: boolean;
  stopped: boolean;
}

function fakeStream(): { opened: Opened[]; stream: { watch: (k: Buffer, e: Buffer, from: number, sink: WatchSink, prevKv?: boolean) => { stop(): void } } } {
  const opened: Opened[] = [];
  return {
    opened,
    stream: {
      watch: (_k, _e, from, sink, prevKv = false) => {
        const o: Opened = { from, sink, prevKv, stopped: false };
        opened.push(o);
        return { stop: () => (o.stopped = true) };
      },
    },
  };
}

const ev = (revision: number): Event => ({ type: 'Put', kv: { key: Buffer.from('/p/a'), value: Buffer.from('{}'), mod_revision: revision, create_revision: 1, version: 1 } });

function recorder(): WatchSink & { got: (number | string)[] } {
  const got: (number | string)[] = [];
  return {
    got,
    events: (events) => got.push(...events.map((e) => Number(e.kv.mod_revision))),
    progress: (r) => got.push(`progress ${r}`),
    ended: (reason) => got.push(`ended ${reason.compactRevision ?? reason.message}`),
  };
}

const P = Buffer.from('/p/');
const END = Buffer.from('/p0');

describe('SharedWatches', () => {
  it('puts watches of a range that start at or after what was delivered on one etcd watch, each from its own revision', () => {
    const { opened, stream } = fakeStream();
    const shared = new SharedWatches(stream, () => 20);
    const a = recorder();
    const b = recorder();
    shared.watch(P, END, 10, a);
    opened[0]!.sink.events([ev(11), ev(12)]);
    shared.watch(P, END, 13, b);
    expect(opened).toHaveLength(1);
    opened[0]!.sink.events([ev(13), ev(14)]);
    opened[0]!.sink.progress(16);
    expect(a.got).toEqual([11, 12, 13, 14, 'progress 16']);
    expect(b.got).toEqual([14, 'progress 16']);
  });

  it('starts another etcd watch for a watch from before what the shared one delivered, and keeps ranges apart', () => {
    const { opened, stream } = fakeStream();
    const shared = new SharedWatches(stream, () => 20);
    shared.watch(P, END, 10, recorder());
    opened[0]!.sink.events([ev(15)]);
    const late = recorder();
    shared.watch(P, END, 12, late);
    shared.watch(Buffer.from('/q/'), Buffer.from('/q0'), 15, recorder());
    expect(opened.map((o) => o.from)).toEqual([10, 12, 15]);
    // Only the one replaying what the first already delivered asks etcd for previous values.
    expect(opened.map((o) => o.prevKv)).toEqual([false, true, false]);
    opened[1]!.sink.events([ev(13), ev(15)]);
    expect(late.got).toEqual([13, 15]);
  });

  it('stops the etcd watch with its last watcher, and a later watch starts a new one', () => {
    const { opened, stream } = fakeStream();
    const shared = new SharedWatches(stream, () => 20);
    const a = shared.watch(P, END, 10, recorder());
    const b = shared.watch(P, END, 10, recorder());
    a.stop();
    expect(opened[0]!.stopped).toBe(false);
    b.stop();
    b.stop();
    expect(opened[0]!.stopped).toBe(true);
    shared.watch(P, END, 10, recorder());
    expect(opened).toHaveLength(2);
  });

  it('ends every watcher when etcd ends the shared watch, and the next watch gets its own', () => {
    const { opened, stream } = fakeStream();
    const shared = new SharedWatches(stream, () => 20);
    const a = recorder();
    const b = recorder();
    shared.watch(P, END, 10, a);
    const hb = shared.watch(P, END, 10, b);
    opened[0]!.sink.ended({ compactRevision: 20, message: 'compacted' });
    expect([a.got, b.got]).toEqual([['ended 20'], ['ended 20']]);
    hb.stop();
    shared.watch(P, END, 25, recorder());
    expect(opened.map((o) => o.from)).toEqual([10, 25]);
  });

  it("names the revision of each key's previous state when this watch delivered it, and for keys it has not seen the revision it started after", () => {
    const { opened, stream } = fakeStream();
    const shared = new SharedWatches(stream, () => 20);
    const got: SharedEvent[] = [];
    shared.watch(P, END, 10, { ...recorder(), events: (events) => got.push(...events) });
    const at = (key: string, type: Event['type'], mod: number, create: number): Event => ({
      type,
      kv: { key: Buffer.from(key), value: Buffer.from('{}'), mod_revision: mod, create_revision: create, version: 1 },
    });
    opened[0]!.sink.events([at('/p/old', 'Put', 11, 3), at('/p/new', 'Put', 12, 12)]);
    opened[0]!.sink.events([at('/p/new', 'Put', 13, 12), at('/p/old', 'Put', 14, 3)]);
    opened[0]!.sink.events([at('/p/new', 'Delete', 15, 0), at('/p/new', 'Put', 16, 16), at('/p/gone', 'Delete', 17, 0)]);
    expect(got.map((e) => [e.kv.key.toString(), e.kv.mod_revision, e.prevRevision, e.since])).toEqual([
      // Changed before the watch started: unchanged between its start and this event.
      ['/p/old', 11, undefined, 10],
      ['/p/new', 12, undefined, undefined],
      ['/p/new', 13, 12, undefined],
      ['/p/old', 14, 11, undefined],
      ['/p/new', 15, 13, undefined],
      // Created again after its delete: no previous state.
      ['/p/new', 16, undefined, undefined],
      ['/p/gone', 17, undefined, 10],
    ]);
  });

  it('asks etcd for previous values for a first watch that starts far behind the newest revision seen', () => {
    const { opened, stream } = fakeStream();
    let newest = 1000;
    const shared = new SharedWatches(stream, () => newest);
    shared.watch(P, END, newest - REPLAY_REVISIONS, recorder());
    shared.watch(Buffer.from('/q/'), Buffer.from('/q0'), newest - REPLAY_REVISIONS - 1, recorder());
    newest = 5000;
    shared.watch(Buffer.from('/r/'), Buffer.from('/r0'), 4990, recorder());
    expect(opened.map((o) => o.prevKv)).toEqual([false, true, false]);
  });
});
