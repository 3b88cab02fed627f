/**
 * A replica's watches on the same etcd range share one etcd watch, as kube-apiserver's cacher keeps
 * one etcd watch per resource however many clients watch it: etcd sends each event once, and this
 * replica receives and decodes it once. A watch joins a shared one that has delivered nothing past
 * its start revision (every event after that revision is still to come, in order); otherwise it
 * starts its own from its revision, which later watches may join in turn. The shared etcd watch ends
 * with its last watcher.
 */
import type { Event } from './watch-proto.js';
import type { WatchSink, WatchStream } from './watch-stream.js';

interface Watcher {
  /** Events at or below this revision are not this watcher's (it started after them). */
  readonly from: number;
  readonly sink: WatchSink;
}

interface Shared {
  /** Every event up to this revision has been delivered (or the revision it started after). */
  last: number;
  readonly watchers: Set<Watcher>;
  handle?: { stop(): void };
}

const revisionOf = (ev: Event): number => Number(ev.kv.mod_revision);

export class SharedWatches {
  /** Shared watches by range (start and end key). */
  private readonly ranges = new Map<string, Set<Shared>>();

  constructor(private readonly stream: Pick<WatchStream, 'watch'>) {}

  /** As WatchStream.watch: keys in [key, rangeEnd) from `fromRevision + 1`. */
  watch(key: Buffer, rangeEnd: Buffer, fromRevision: number, sink: WatchSink): { stop(): void } {
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
    const s: Shared = { last: from, watchers: new Set() };
    all.add(s);
    s.handle = this.stream.watch(key, rangeEnd, from, {
      events: (events) => {
        s.last = revisionOf(events[events.length - 1]!);
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
    });
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
