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
 * next event of that key). For a key it has not delivered, the key did not change between the
 * watch's start and the event (`since`), so a state a list or read showed current at or after the
 * start is the previous one (an informer's list then watch); the store reads the state etcd had just
 * before the event only when it knows none (previous-states.ts). A further etcd watch of a range
 * replays history a watch of the range has already delivered (a client resuming from an older
 * resourceVersion), where most keys are new to it: it asks etcd for previous values, as before,
 * rather than read each one. So
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
  /**
   * For an update or delete of a key this watch has not delivered, the revision it started after: the
   * key did not change between that revision and the event, so a state seen current then is the previous one.
   */
  since?: number;
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
  /** The revision the etcd watch started after. */
  readonly from: number;
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
    const s: Shared = { from, last: from, watchers: new Set(), revisions: new Map() };
    const replay = all.size > 0 || from < this.newest() - REPLAY_REVISIONS;
    all.add(s);
    s.handle = this.stream.watch(key, rangeEnd, from, {
      events: (events: SharedEvent[]) => {
        s.last = revisionOf(events[events.length - 1]!);
        if (!replay) for (const ev of events) previous(s, ev);
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

/** Sets the event's `prevRevision` (or `since`) from what the watch delivered before, and records the event. */
function previous(s: Shared, ev: SharedEvent): void {
  const revisions = s.revisions;
  const key = ev.kv.key.toString('latin1');
  const seen = revisions.get(key);
  if (ev.kv.create_revision !== ev.kv.mod_revision) {
    if (seen !== undefined) ev.prevRevision = seen;
    else ev.since = s.from;
  }
  if (ev.type === 'Delete') revisions.delete(key);
  else revisions.set(key, revisionOf(ev));
}
