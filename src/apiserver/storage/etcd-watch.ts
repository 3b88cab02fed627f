/**
 * A Store watch served by an etcd watch on the prefix from `fromRevision + 1`, with previous
 * values (MODIFIED and DELETED carry `prevObject`) and progress notifications (`onProgress`).
 *
 * Resumption is ours: the etcd3 client would re-create a watch after a broken stream from the last
 * response *header* revision, which is past events etcd had not sent yet when it answers a watch
 * catching up on history in several batches, and it waits on a timer nobody can clear. So each time
 * the stream breaks we drop the client's watcher and, after a backoff we cancel on stop, open a new
 * one from the revision after the last event delivered: events at or below it are never delivered
 * twice, the watch stays ordered, unique and reliable across etcd restarts and leader changes, and
 * a stopped watch leaves nothing running. A start revision older than the compacted history ends
 * the watch with Compacted (410 upstream).
 */
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import type { Etcd3, IEvent, IWatchResponse, Watcher } from 'etcd3';
import { decode } from './etcd-value.js';
import type { StoreEvent, WatchHandle, WatchOptions } from './store.js';
import { StoreError } from './store.js';

export interface EtcdWatchContext {
  etcdPrefix: string;
  /** The Store key of an etcd key under the prefix. */
  toKey: (etcdKey: string) => string;
  options: WatchOptions;
  /** The oldest revision known to be kept. */
  compacted: () => number;
  /** Every revision seen (the store's currentRevision follows it). */
  observe: (revision: number) => void;
  /** Whether a read at `revision` fails as compacted (asked after etcd cancelled the watch). */
  isCompacted: (revision: number) => Promise<boolean>;
  onStop: (watch: EtcdWatch) => void;
}

/** Re-opened within 2 s of etcd coming back. */
const RECONNECT_BACKOFF = new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 });

export class EtcdWatch implements WatchHandle {
  private last: number;
  private stopped = false;
  private watcher: Watcher | undefined;
  private backoff: IBackoff<unknown> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Etcd3,
    private readonly ctx: EtcdWatchContext,
  ) {
    this.last = ctx.options.fromRevision;
  }

  start(): void {
    // Stricter than etcd by one: a watch from the compacted revision itself is still served.
    if (this.last < this.ctx.compacted()) {
      queueMicrotask(() => this.fail(this.compactedError()));
      return;
    }
    this.open();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ctx.onStop(this);
    clearTimeout(this.reconnectTimer);
    this.watcher?.cancel().catch(() => undefined);
  }

  private open(): void {
    const watcher = this.client
      .watch()
      .prefix(this.ctx.etcdPrefix)
      .withPreviousKV()
      .startRevision(String(this.last + 1))
      .watcher();
    this.watcher = watcher;
    watcher.on('connected', () => (this.backoff = undefined));
    watcher.on('data', (res: IWatchResponse) => this.receive(res));
    watcher.on('disconnected', () => this.reopen(watcher));
    watcher.on('error', (err: Error) => void this.cancelled(err));
  }

  /** The stream broke: detach the client's watcher (at once, it is not connected) and open another later. */
  private reopen(watcher: Watcher): void {
    watcher.cancel().catch(() => undefined);
    if (this.stopped || watcher !== this.watcher) return;
    this.watcher = undefined;
    this.backoff = this.backoff ? this.backoff.next(undefined) : RECONNECT_BACKOFF.next();
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (!this.stopped) this.open();
    }, this.backoff.duration);
  }

  private receive(res: IWatchResponse): void {
    if (this.stopped) return;
    const header = Number(res.header.revision);
    this.ctx.observe(header);
    if (res.events.length === 0) {
      // A progress notification: every event up to the header revision has been sent.
      if (header > this.last) {
        this.last = header;
        this.ctx.options.onProgress?.(header);
      }
      return;
    }
    for (const ev of res.events) {
      const event = this.toEvent(ev);
      if (event.revision <= this.last) continue;
      this.last = event.revision;
      this.ctx.options.onEvent(event);
      if (this.stopped) return;
    }
  }

  private toEvent(ev: IEvent): StoreEvent {
    const key = this.ctx.toKey(ev.kv.key.toString());
    const revision = Number(ev.kv.mod_revision);
    const prevObject = ev.prev_kv ? decode(ev.prev_kv.value, Number(ev.prev_kv.mod_revision)) : undefined;
    if (ev.type === 'Delete') {
      // etcd's delete event has no value: the object is the previous state at the delete's revision.
      const object = ev.prev_kv ? decode(ev.prev_kv.value, revision) : { metadata: { resourceVersion: String(revision) } };
      return { type: 'DELETED', key, object, prevObject, revision };
    }
    const object = decode(ev.kv.value, revision);
    const type = ev.kv.create_revision === ev.kv.mod_revision ? 'ADDED' : 'MODIFIED';
    return prevObject ? { type, key, object, prevObject, revision } : { type, key, object, revision };
  }

  /** etcd cancelled the watch: its start revision was compacted away, or it failed otherwise. */
  private async cancelled(err: Error): Promise<void> {
    if (this.stopped) return;
    // etcd3 reports the cancel without etcd's compact_revision: ask etcd whether our next revision is gone.
    if (await this.ctx.isCompacted(this.last + 1).catch(() => false)) this.fail(this.compactedError());
    else this.fail(new StoreError('Unavailable', this.ctx.etcdPrefix, `etcd ended the watch: ${err.message}`));
  }

  private compactedError(): StoreError {
    const oldest = this.ctx.compacted();
    return new StoreError('Compacted', this.ctx.etcdPrefix, `revision ${this.last} has been compacted; the oldest available is ${oldest}`, oldest);
  }

  private fail(err: StoreError): void {
    if (this.stopped) return;
    this.stop();
    this.ctx.options.onError?.(err);
  }
}
