/**
 * A replica's watches on the same etcd range share one etcd watch, as kube-apiserver's cacher keeps
 * one etcd watch per resource however many clients watch it: etcd sends each event once, and this
 * replica receives and decodes it once. A watch joins a shared one that has delivered nothing past
 * its start revision (every event after that revision is still to come, in order); otherwise it
 * starts its own from its revision, which later watches may join in turn. The shared etcd watch ends
 * with its last watcher.
 *
 * The first etcd watch of a range is made without previous values (etcd would read each event's
 * previous value from its backend and send it, for every watch: about a fifth of its CPU per write
 * with one replica's watch, and half the bytes this replica receives and parses). The previous state
 * of a key is the one this watch delivered last for it, which every watcher has just decoded: each
 * shared watch remembers the revision of the last event it delivered per key (`prevRevision` on the
 * next event of that key), and the store reads the state etcd had just before an event only for a
 * key it has not seen yet (previous-states.ts). A further etcd watch of a range replays history a
 * watch of the range has already delivered (a client resuming from an older resourceVersion), where
 * most keys are new to it: it asks etcd for previous values, as before, rather than read each one. So
 * does a first watch that starts more than REPLAY_REVISIONS behind the newest revision the replica has
 * seen, which bounds the reads a first watch can cost (a list followed by its watch starts close to it).
 */
import type { Event } from './watch-proto.js';
import type { WatchSink, WatchStream } from './watch-stream.js';

/** An event as a shared watch delivers it. */
export interface SharedEvent extends Event {
  /**
   * For an update or delete, the revision of the key's state before it, when this watch delivered
   * that state; undefined when it has not (the key has not changed since before the watch started).
   */
  prevRevision?: number;
}

export interface SharedSink extends Omit<WatchSink, 'events'> {
  events(events: SharedEvent[]): void;
}

interface Watcher {
  /** Events at or below this revision are not this watcher's (it started after them). */
  readonly from: number;
  readonly sink: SharedSink;
}

interface Shared {
  /** Every event up to this revision has been delivered (or the revision it started after). */
  last: number;
  readonly watchers: Set<Watcher>;
  /** The revision of the last event delivered for each key that exists (by its bytes as latin1), without previous values from etcd. */
  readonly revisions: Map<string, number>;
  handle?: { stop(): void };
}

const revisionOf = (ev: Event): number => Number(ev.kv.mod_revision);

/** How far behind the newest revision a first watch may start and still go without previous values. */
export const REPLAY_REVISIONS = 100;

export class SharedWatches {
  /** Shared watches by range (start and end key). */
  private readonly ranges = new Map<string, Set<Shared>>();

  constructor(
    private readonly stream: Pick<WatchStream, 'watch'>,
    /** The newest revision the replica has seen. */
    private readonly newest: () => number,
  ) {}

  /** As WatchStream.watch: keys in [key, rangeEnd) from `fromRevision + 1`. */
  watch(key: Buffer, rangeEnd: Buffer, fromRevision: number, sink: SharedSink): { stop(): void } {
    const range = `${key.toString('latin1')}\u0000${rangeEnd.toString('latin1')}`;
    let shared = this.ranges.get(range);
    if (!shared) {
      shared = new Set();
      this.ranges.set(range, shared);
    }
    const watcher: Watcher = { from: fromRevision, sink };
    const joined = [...shared].find((s) => s.last <= fromRevision) ?? this.start(range, shared, key, rangeEnd, fromRevision);
    joined.watchers.add(watcher);
    return { stop: () => this.leave(range, shared, joined, watcher) };
  }

  private start(range: string, all: Set<Shared>, key: Buffer, rangeEnd: Buffer, from: number): Shared {
    const s: Shared = { last: from, watchers: new Set(), revisions: new Map() };
    const replay = all.size > 0 || from < this.newest() - REPLAY_REVISIONS;
    all.add(s);
    s.handle = this.stream.watch(key, rangeEnd, from, {
      events: (events: SharedEvent[]) => {
        s.last = revisionOf(events[events.length - 1]!);
        if (!replay) for (const ev of events) previous(s.revisions, ev);
        for (const w of [...s.watchers]) {
          const mine = revisionOf(events[0]!) > w.from ? events : events.filter((ev) => revisionOf(ev) > w.from);
          if (mine.length > 0) w.sink.events(mine);
        }
      },
      progress: (revision) => {
        s.last = Math.max(s.last, revision);
        for (const w of [...s.watchers]) if (revision > w.from) w.sink.progress(revision);
      },
      ended: (reason) => {
        this.forget(range, all, s);
        for (const w of [...s.watchers]) w.sink.ended(reason);
        s.watchers.clear();
      },
    }, replay);
    return s;
  }

  private leave(range: string, all: Set<Shared>, s: Shared, watcher: Watcher): void {
    if (!s.watchers.delete(watcher) || s.watchers.size > 0) return;
    this.forget(range, all, s);
    s.handle?.stop();
  }

  private forget(range: string, all: Set<Shared>, s: Shared): void {
    all.delete(s);
    if (all.size === 0 && this.ranges.get(range) === all) this.ranges.delete(range);
  }
}

/** Sets the event's `prevRevision` from what the watch delivered before, and records the event. */
function previous(revisions: Map<string, number>, ev: SharedEvent): void {
  const key = ev.kv.key.toString('latin1');
  const seen = revisions.get(key);
  if (seen !== undefined && ev.kv.create_revision !== ev.kv.mod_revision) ev.prevRevision = seen;
  if (ev.type === 'Delete') revisions.delete(key);
  else revisions.set(key, revisionOf(ev));
}
