/**
 * A Store watch on the replica's shared etcd watch stream (etcd/watch-stream.ts): etcd's events on
 * the prefix from `fromRevision + 1` as StoreEvents, with previous values (MODIFIED and DELETED carry
 * `prevObject`) and progress notifications (`onProgress`). The stream resumes it across broken
 * connections and member changes without losing or repeating an event. A start revision older than
 * the compacted history ends the watch with Compacted (410 upstream), as does etcd cancelling it for
 * that reason later; etcd ending it for any other reason ends it with Unavailable (clients watch again).
 */
import { Range, type IEvent } from 'etcd3';
import { decode } from './etcd-value.js';
import type { WatchStream } from './watch-stream.js';
import type { StoreEvent, WatchHandle, WatchOptions } from '../store.js';
import { StoreError } from '../store.js';

export interface EtcdWatchContext {
  etcdPrefix: string;
  /** The Store key of an etcd key under the prefix. */
  toKey: (etcdKey: string) => string;
  options: WatchOptions;
  /** The oldest revision known to be kept. */
  compacted: () => number;
  /** etcd reported history compacted up to `revision`. */
  observeCompacted: (revision: number) => void;
  onStop: (watch: EtcdWatch) => void;
}

export class EtcdWatch implements WatchHandle {
  private stopped = false;
  private handle: { stop(): void } | undefined;

  constructor(
    private readonly stream: WatchStream,
    private readonly ctx: EtcdWatchContext,
  ) {}

  start(): void {
    const from = this.ctx.options.fromRevision;
    // Stricter than etcd by one: a watch from the compacted revision itself is still served.
    if (from < this.ctx.compacted()) {
      queueMicrotask(() => this.fail(this.compactedError(from)));
      return;
    }
    const range = Range.prefix(this.ctx.etcdPrefix);
    this.handle = this.stream.watch(range.start, range.end, from, {
      events: (events) => this.deliver(events),
      progress: (revision) => !this.stopped && this.ctx.options.onProgress?.(revision),
      ended: ({ compactRevision, message }) => {
        if (compactRevision === undefined) {
          this.fail(new StoreError('Unavailable', this.ctx.etcdPrefix, `etcd ended the watch: ${message}`));
          return;
        }
        this.ctx.observeCompacted(compactRevision);
        this.fail(this.compactedError(from));
      },
    });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ctx.onStop(this);
    this.handle?.stop();
  }

  private deliver(events: IEvent[]): void {
    for (const ev of events) {
      if (this.stopped) return;
      this.ctx.options.onEvent(this.toEvent(ev));
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

  private compactedError(from: number): StoreError {
    const oldest = this.ctx.compacted();
    return new StoreError('Compacted', this.ctx.etcdPrefix, `revision ${from} has been compacted; the oldest available is ${oldest}`, oldest);
  }

  private fail(err: StoreError): void {
    if (this.stopped) return;
    this.stop();
    this.ctx.options.onError?.(err);
  }
}
