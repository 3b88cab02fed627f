/**
 * A Store watch on the replica's shared etcd watch stream (etcd/watch-stream.ts): etcd's events on
 * the prefix from `fromRevision + 1` as StoreEvents, with previous values (MODIFIED and DELETED carry
 * `prevObject`, which the store finds among what it decoded or reads from etcd: shared-watches.ts)
 * and progress notifications (`onProgress`). The stream resumes it across broken
 * connections and member changes without losing or repeating an event. A start revision older than
 * the compacted history ends the watch with Compacted (410 upstream), as does etcd cancelling it for
 * that reason later; etcd ending it for any other reason ends it with Unavailable (clients watch again).
 */
import { Range } from 'etcd3';
import type { KObject } from '../../../api/meta.js';
import { atRevision, RelayedValue } from './etcd-value.js';
import type { Revisioned } from './recent-objects.js';
import type { SharedEvent, SharedWatches } from './shared-watches.js';
import type { StoreEvent, WatchHandle, WatchOptions } from '../store.js';
import { StoreError } from '../store.js';

export interface EtcdWatchContext {
  etcdPrefix: string;
  /** The Store key of an etcd key under the prefix. */
  toKey: (etcdKey: string) => string;
  /**
   * The object a value of `key` holds at `revision` (decrypted, with encryption at rest), once per store:
   * a plain value may come as a RelayedValue, whose object is parsed only when read.
   */
  relay: (key: string, etcdKey: string, value: Uint8Array, revision: number) => Revisioned | Promise<Revisioned>;
  /**
   * The state of `key` before the event at `revision`: the one this replica holds at `prevRevision`,
   * or seen current at `since` or later, when it still has it, else read from etcd at `revision - 1`
   * (undefined when there was none).
   */
  previous: (key: string, etcdKey: string, revision: number, ev: Pick<SharedEvent, 'prevRevision' | 'since'>) => Revisioned | Promise<Revisioned | undefined> | undefined;
  /** The etcd key was deleted at `revision`. */
  deleted: (etcdKey: string, revision: number) => void;
  options: WatchOptions;
  /** The oldest revision known to be kept. */
  compacted: () => number;
  /** etcd reported history compacted up to `revision`. */
  observeCompacted: (revision: number) => void;
  onStop: (watch: EtcdWatch) => void;
}

export class EtcdWatch implements WatchHandle {
  private stopped = false;
  /** Whether the watcher takes relayed events (WatchOptions.relay). */
  private readonly relays: boolean;
  private handle: { stop(): void } | undefined;
  /** Events still being delivered while one waits for a KMS plugin to decrypt its DEK; later ones queue behind. */
  private backlog: Promise<void> | undefined;

  constructor(
    private readonly stream: Pick<SharedWatches, 'watch'>,
    private readonly ctx: EtcdWatchContext,
  ) {
    this.relays = ctx.options.relay === true;
  }

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
      progress: (revision) => this.progress(revision),
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

  private deliver(events: SharedEvent[]): void {
    if (this.backlog) this.track(this.backlog.then(() => this.decodeAndDeliver(events)));
    else this.track(this.decodeAndDeliver(events));
  }

  /** A progress notification says every event up to `revision` was delivered: it waits behind events still decoding. */
  private progress(revision: number): void {
    const tell = (): void => {
      if (!this.stopped) this.ctx.options.onProgress?.(revision);
    };
    if (this.backlog) this.track(this.backlog.then(tell));
    else tell();
  }

  private track(pending: Promise<void> | undefined): void {
    if (!pending) return;
    const tracked: Promise<void> = pending.then(
      () => {
        if (this.backlog === tracked) this.backlog = undefined;
      },
      (err: unknown) => this.undecodable(err),
    );
    this.backlog = tracked;
  }

  /** Delivers events in order; a promise when one of them waits for a KMS decrypt. */
  private decodeAndDeliver(events: SharedEvent[]): Promise<void> | undefined {
    let decoded: (StoreEvent | Promise<StoreEvent>)[];
    try {
      decoded = events.map((ev) => this.toEvent(ev));
    } catch (err) {
      this.undecodable(err);
      return undefined;
    }
    for (let i = 0; i < decoded.length; i++) {
      const event = decoded[i]!;
      if (event instanceof Promise) return Promise.all(decoded.slice(i)).then((rest) => rest.forEach((e) => this.emit(e)));
      this.emit(event);
    }
    return undefined;
  }

  private emit(event: StoreEvent): void {
    if (!this.stopped) this.ctx.options.onEvent(event);
  }

  /**
   * A value this replica cannot read ends the watch, as upstream's: a KMS plugin that is down with
   * its own StoreError (503), anything else (a key that is gone, a value that is not JSON) as
   * upstream's InternalError.
   */
  private undecodable(err: unknown): void {
    this.fail(err instanceof StoreError ? err : new StoreError('Undecodable', this.ctx.etcdPrefix, `cannot decode a watched value: ${(err as Error).message}`));
  }

  private toEvent(ev: SharedEvent): StoreEvent | Promise<StoreEvent> {
    const etcdKey = ev.kv.key.toString();
    const key = this.ctx.toKey(etcdKey);
    const revision = Number(ev.kv.mod_revision);
    const relay = this.ctx.relay;
    const created = ev.type === 'Put' && ev.kv.create_revision === ev.kv.mod_revision;
    const prev = ev.prev_kv
      ? relay(key, etcdKey, ev.prev_kv.value, Number(ev.prev_kv.mod_revision))
      : created
        ? undefined
        : this.ctx.previous(key, etcdKey, revision, ev);
    let current: Revisioned | Promise<Revisioned>;
    let type: StoreEvent['type'];
    if (ev.type === 'Delete') {
      this.ctx.deleted(etcdKey, revision);
      // etcd's delete event has no value: the object is the previous state at the delete's revision.
      const deletedAt = (p: Revisioned | undefined): Revisioned => ({
        object: p ? atRevision(p.object, revision) : { metadata: { resourceVersion: String(revision) } },
        revision,
      });
      current = prev instanceof Promise ? prev.then(deletedAt) : deletedAt(prev);
      type = 'DELETED';
    } else {
      current = relay(key, etcdKey, ev.kv.value, revision);
      type = created ? 'ADDED' : 'MODIFIED';
    }
    if (current instanceof Promise || prev instanceof Promise) return Promise.all([current, prev]).then(([c, p]) => this.build(type, key, revision, c, p));
    return this.build(type, key, revision, current, prev);
  }

  private build(type: StoreEvent['type'], key: string, revision: number, current: Revisioned, prev: Revisioned | undefined): StoreEvent {
    return this.relays ? new RelayedEvent(type, key, revision, current, prev) : parsedEvent(type, key, revision, current, prev);
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

/**
 * An event whose objects are built before delivery: a value that cannot be read ends the watch here
 * (`undecodable`), not in the watcher.
 */
function parsedEvent(type: StoreEvent['type'], key: string, revision: number, current: Revisioned, prev: Revisioned | undefined): StoreEvent {
  return prev ? { type, key, object: current.object, prevObject: prev.object, revision } : { type, key, object: current.object, revision };
}

/**
 * An event for a watcher that reads `text` when it can: its objects are parsed only if read (`prevObject`
 * is undefined for ADDED). A class, so the getters live on its prototype rather than in two closures
 * made for every event a replica relays.
 */
class RelayedEvent implements StoreEvent {
  readonly text: string | undefined;

  constructor(
    readonly type: StoreEvent['type'],
    readonly key: string,
    readonly revision: number,
    private readonly current: Revisioned,
    private readonly prev: Revisioned | undefined,
  ) {
    this.text = current instanceof RelayedValue ? current.text : undefined;
  }

  get object(): KObject {
    return this.current.object;
  }

  get prevObject(): KObject | undefined {
    return this.prev?.object;
  }
}
