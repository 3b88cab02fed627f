/**
 * One etcd Watch stream per replica, multiplexing every watch of the store, as etcd's Go client
 * does for kube-apiserver. Creates go out one at a time and etcd answers them in order, so each
 * `created` response names the watch id of the oldest create in flight. Responses are read
 * defensively: an event or progress response for a watch id we do not hold is answered with a
 * cancel (once), a cancel for a watch we never made is dropped, a `created` nobody asked for is
 * cancelled, and fragments (`fragment: true`) are joined before delivery. Nothing etcd sends can
 * throw out of here.
 *
 * When the stream breaks (member killed, partitioned, without a leader: the RPC asks for one), every
 * watch goes back to the queue and, after a backoff, is created again on the next member from the
 * revision after the last one it delivered, so events are never lost or repeated. A watch etcd
 * ends because its next revision was compacted is told so with etcd's compact revision.
 */
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import type { Event, WatchResponse } from './watch-proto.js';
import type { Logger } from '../../../log/logger.js';
import type { WatchCall, WatchTransport } from './watch-transport.js';

export interface WatchSink {
  /** New events, in revision order, all above every revision delivered before. */
  events(events: Event[]): void;
  /** Every event up to `revision` has been delivered (a progress notification). */
  progress(revision: number): void;
  /** etcd ended the watch: `compactRevision` when its next revision was compacted away. No call follows. */
  ended(reason: { compactRevision?: number; message: string }): void;
}

export interface WatchStreamHooks {
  /** Every response header's revision (the store's newest revision seen follows it). */
  observe: (revision: number) => void;
  logger?: Logger;
}

interface Watch {
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  readonly sink: WatchSink;
  /** Whether etcd sends each event's previous value (shared-watches.ts says when). */
  readonly prevKv: boolean;
  /** The revision of the last event (or progress) delivered: a resumed watch starts after it. */
  last: number;
  /** etcd's id for this watch on the current stream, once created. */
  id?: string;
  fragments: Event[];
  stopped: boolean;
}

/** A broken stream is opened again on the next member within 2 s of one answering. */
const RECONNECT_BACKOFF = new ExponentialBackoff({ initialDelay: 50, maxDelay: 2000 });

export class WatchStream {
  private call: WatchCall | undefined;
  private endpoint = '';
  /** Watches created on the current stream, by etcd's watch id. */
  private readonly active = new Map<string, Watch>();
  /** Watches waiting for their create to be sent; `creating` is the one etcd has not answered yet. */
  private pending: Watch[] = [];
  private creating: Watch | undefined;
  /** Ids we sent a cancel for on this stream, so an unknown id is cancelled only once. */
  private readonly cancelling = new Set<string>();
  private backoff: IBackoff<unknown> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly transport: WatchTransport,
    private readonly hooks: WatchStreamHooks,
  ) {}

  /** Watches keys in [key, rangeEnd) from `fromRevision + 1`, with progress notifications, and previous values when `prevKv`. */
  watch(key: Buffer, rangeEnd: Buffer, fromRevision: number, sink: WatchSink, prevKv = false): { stop(): void } {
    if (this.closed) throw new Error('watch stream is closed');
    const watch: Watch = { key, rangeEnd, sink, prevKv, last: fromRevision, fragments: [], stopped: false };
    this.pending.push(watch);
    if (this.call) this.sendNext();
    else if (!this.timer) this.open();
    return { stop: () => this.stop(watch) };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of [...this.active.values(), ...this.pending]) w.stopped = true;
    this.active.clear();
    this.pending = [];
    this.creating = undefined;
    this.drop();
    this.transport.close();
  }

  private open(): void {
    if (this.closed) return;
    let opened: { call: WatchCall; endpoint: string };
    try {
      opened = this.transport.open();
    } catch (err) {
      this.broken(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    const { call, endpoint } = opened;
    this.call = call;
    this.endpoint = endpoint;
    // Whatever an abandoned call still reports is ignored.
    call.on('data', (res) => this.call === call && this.receive(res));
    call.on('error', (err) => this.call === call && this.broken(err));
    call.on('end', () => this.call === call && this.broken(new Error('etcd ended the watch stream')));
    this.sendNext();
  }

  private sendNext(): void {
    if (!this.call || this.creating) return;
    const watch = this.pending.shift();
    if (!watch) return;
    this.creating = watch;
    this.call.write({
      create_request: {
        key: watch.key,
        range_end: watch.rangeEnd,
        start_revision: watch.last + 1,
        prev_kv: watch.prevKv,
        progress_notify: true,
        fragment: true,
      },
    });
  }

  private receive(res: WatchResponse): void {
    if (res.header) this.hooks.observe(Number(res.header.revision));
    const id = String(res.watch_id);
    if (res.created) {
      this.created(id, res);
      return;
    }
    const watch = this.active.get(id);
    if (res.canceled) {
      this.canceled(id, watch, res);
      return;
    }
    if (!watch) {
      this.hooks.logger?.warn({ watchId: id, endpoint: this.endpoint }, 'etcd sent a watch response for an unknown watch id');
      this.cancel(id);
      return;
    }
    if (res.fragment) watch.fragments.push(...res.events);
    else this.deliver(watch, res);
  }

  private canceled(id: string, watch: Watch | undefined, res: WatchResponse): void {
    this.cancelling.delete(id);
    if (!watch) {
      this.hooks.logger?.debug({ watchId: id, endpoint: this.endpoint }, 'etcd cancelled a watch this replica does not hold');
      return;
    }
    this.active.delete(id);
    this.ended(watch, res);
    this.dropIfIdle();
  }

  /** A whole response for `watch` (its fragments joined): its new events, or a progress notification. */
  private deliver(watch: Watch, res: WatchResponse): void {
    const events = watch.fragments.length ? [...watch.fragments, ...res.events] : res.events;
    watch.fragments = [];
    if (events.length === 0) {
      const revision = res.header?.revision ?? 0;
      if (revision > watch.last) {
        watch.last = revision;
        watch.sink.progress(revision);
      }
      return;
    }
    // After a resume etcd may repeat what was delivered; otherwise every event is new and kept as it came.
    const last = watch.last;
    const fresh = Number(events[0]!.kv.mod_revision) > last ? events : events.filter((ev) => Number(ev.kv.mod_revision) > last);
    if (fresh.length === 0) return;
    watch.last = Number(fresh[fresh.length - 1]!.kv.mod_revision);
    watch.sink.events(fresh);
  }

  private created(id: string, res: WatchResponse): void {
    const watch = this.creating;
    this.creating = undefined;
    if (!watch) {
      this.hooks.logger?.warn({ watchId: id, endpoint: this.endpoint }, 'etcd created a watch this replica did not ask for');
      this.cancel(id);
    } else if (res.canceled) {
      this.ended(watch, res);
    } else if (watch.stopped) {
      this.cancel(id);
    } else {
      watch.id = id;
      this.active.set(id, watch);
      // The stream serves: the next break starts its backoff afresh.
      this.backoff = undefined;
    }
    this.sendNext();
    this.dropIfIdle();
  }

  private ended(watch: Watch, res: WatchResponse): void {
    watch.id = undefined;
    if (watch.stopped) return;
    watch.stopped = true;
    const compact = Number(res.compact_revision);
    watch.sink.ended({ compactRevision: compact > 0 ? compact : undefined, message: res.cancel_reason || 'etcd cancelled the watch' });
  }

  private cancel(id: string): void {
    if (!this.call || this.cancelling.has(id)) return;
    this.cancelling.add(id);
    this.call.write({ cancel_request: { watch_id: id } });
  }

  private stop(watch: Watch): void {
    if (watch.stopped) return;
    watch.stopped = true;
    if (watch.id !== undefined) {
      this.active.delete(watch.id);
      this.cancel(watch.id);
      watch.id = undefined;
    } else {
      this.pending = this.pending.filter((w) => w !== watch);
    }
    this.dropIfIdle();
  }

  /** The stream broke: every live watch is created again, from where it was, on the next member. */
  private broken(err: Error): void {
    this.drop();
    const resume = [this.creating, ...this.active.values(), ...this.pending].filter((w): w is Watch => w !== undefined && !w.stopped);
    this.creating = undefined;
    this.active.clear();
    for (const w of resume) {
      w.id = undefined;
      w.fragments = [];
    }
    this.pending = resume;
    if (resume.length === 0 || this.closed) return;
    this.backoff = this.backoff ? this.backoff.next(undefined) : RECONNECT_BACKOFF.next();
    this.hooks.logger?.warn({ err: err.message, endpoint: this.endpoint, watches: resume.length, retryMs: this.backoff.duration }, 'etcd watch stream broken, resuming on the next member');
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.open();
    }, this.backoff.duration);
  }

  private dropIfIdle(): void {
    if (this.active.size === 0 && this.pending.length === 0 && (!this.creating || this.creating.stopped)) {
      this.creating = undefined;
      this.drop();
    }
  }

  /** Abandons the current call (etcd drops its watches with it). */
  private drop(): void {
    const call = this.call;
    this.call = undefined;
    this.cancelling.clear();
    call?.cancel();
  }
}
