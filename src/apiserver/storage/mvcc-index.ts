/**
 * The in-memory MVCC state both built-in stores serve reads from: the current value of every key
 * (kept in key order for paginated range reads) plus the newest `historyLimit` write events.
 *
 * Every write gets the next revision, so the kept history holds exactly the revisions
 * `compacted+1 .. revision`. That makes any revision in `compacted .. revision` readable: the state
 * at R is the current state with every event after R undone (each event carries the key's previous
 * value), and a watch from R can be served because all events after R are still there.
 *
 * A watch of one resource can start further back: from any revision after the newest event of that
 * resource the history has let go, as kube-apiserver's watch cache, one per resource, serves it.
 * One history for every resource would otherwise let the Lease renewals of a large cluster push a
 * kubelet's Node and pod watches out within a minute, less than the bookmarks' interval, so every
 * reconnect would end in 410 and a relist.
 */
import type { KObject } from '../../api/meta.js';
import { StoreError, type RangeOptions, type RangeResult, type StoreEvent, type StoredObject } from './store.js';
import { adoptFrozen, parseFrozen, revisionOf, stamp, stampInPlace } from './frozen.js';
import { HistoryIndex } from './history-index.js';
import { partitionPoint } from '../../lib/partition-point.js';

/** `handOver`: the writer keeps no reference to `object` (StoreWriteOptions), so it may become the stored object. */
export type WriteOp =
  | { kind: 'create'; key: string; object: KObject; handOver?: boolean }
  | { kind: 'update'; key: string; object: KObject; expectedRevision?: number; handOver?: boolean }
  | { kind: 'delete'; key: string; expectedRevision?: number };

/**
 * A validated write that has not been applied yet; `json` is the new value's stored text (`stored`
 * the bytes encryption at rest made of it, when it claims the key), `prevRevision` the revision of
 * the key's value it replaces (null when there is none).
 */
export interface PreparedWrite {
  event: StoreEvent;
  /** What the write answers and the key's value once applied (null for a delete): one object for both. */
  result: StoredObject;
  json: string;
  stored?: Uint8Array;
  prevRevision: number | null;
}

/** Encryption at rest of a write's value (undefined: stored as JSON text); throwing refuses the write alone. */
export type EncodeValue = (key: string, json: string) => Uint8Array | undefined;

export class MvccIndex {
  private readonly current = new Map<string, StoredObject>();
  /** The keys of `current` but `added`, sorted (UTF-16 code unit order, as JS compares strings); see `ordered`. */
  private keys: string[] = [];
  /**
   * Keys created since the last read that needed the order, not in `keys` yet: a create costs no
   * binary search and no splice (O(n) for a key in the middle, as generated names are); the next
   * ordered read sorts them in at once, for all the creates before it.
   */
  private added: string[] = [];
  /** Events in revision order; `history[head]` has revision `compacted + 1`. */
  private history: StoreEvent[] = [];
  /** The kept history's revisions by directory, for watch backlogs. */
  private readonly historyIndex = new HistoryIndex();
  private head = 0;
  private rev = 0;
  private compacted = 0;
  /** Per resource (`/registry/GROUP/RESOURCE/`), the revision of its newest event the history let go. */
  private readonly dropped = new Map<string, number>();
  /** Below this revision nothing is known of any resource's events: the history restored began after it. */
  private floor = 0;
  /** Latest prepared, unapplied value per key (null: deleted), and how many writes are prepared. */
  private readonly pending = new Map<string, StoredObject | null>();
  private pendingCount = 0;

  constructor(
    private readonly historyLimit: number,
    private readonly encode?: EncodeValue,
  ) {
    if (!Number.isInteger(historyLimit) || historyLimit < 1) throw new RangeError('historyLimit must be an integer >= 1');
  }

  revision(): number {
    return this.rev;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  get(key: string): StoredObject | undefined {
    return this.current.get(key);
  }

  /**
   * Checks `op` against the current state plus the writes prepared but not yet applied (a commit
   * group in flight), and builds its event at the next revision. The prepared write is visible to
   * later `prepare` calls only, never to reads, until it is applied or discarded.
   */
  prepare(op: WriteOp): PreparedWrite {
    const queued = this.pendingCount > 0 ? this.pending.get(op.key) : undefined;
    const existing = queued === undefined ? this.current.get(op.key) : (queued ?? undefined);
    let write: PreparedWrite;
    if (op.kind === 'create') {
      if (existing) throw new StoreError('KeyExists', op.key, `key ${op.key} already exists`, existing.revision);
      write = this.build('ADDED', op.key, op.object, op.handOver === true);
    } else {
      if (!existing) throw new StoreError('KeyNotFound', op.key, `key ${op.key} not found`);
      if (op.expectedRevision !== undefined && op.expectedRevision !== existing.revision) {
        throw new StoreError(
          'Conflict',
          op.key,
          `key ${op.key} is at revision ${existing.revision}, expected ${op.expectedRevision}`,
          existing.revision,
        );
      }
      // A delete's last state is the stored object (frozen, plain JSON) under a new top level and metadata: always safe to adopt.
      write =
        op.kind === 'update'
          ? this.build('MODIFIED', op.key, op.object, op.handOver === true, existing)
          : this.build('DELETED', op.key, existing.object, true, existing);
    }
    this.pending.set(op.key, write.event.type === 'DELETED' ? null : write.result);
    this.pendingCount++;
    return write;
  }

  /** Forgets every prepared, unapplied write (their commit failed); their revisions are free again. */
  discardPending(): void {
    this.pending.clear();
    this.pendingCount = 0;
  }

  /**
   * The write of `source` stamped with the next revision (after every prepared write): its text, and the stored object parsed from that
   * text, or `source` itself frozen when it was handed over (`adoptFrozen`). A handed-over object whose
   * top level and metadata are not frozen (a writer's own, not a stored one's) is stamped where it
   * stands: no copy of either.
   */
  private build(type: StoreEvent['type'], key: string, source: KObject, handOver: boolean, prev?: StoredObject): PreparedWrite {
    const revision = this.rev + this.pendingCount + 1;
    const inPlace = handOver && !Object.isFrozen(source) && !(source.metadata && Object.isFrozen(source.metadata));
    const unstamp = inPlace ? stampInPlace(source, revision) : undefined;
    const stamped = unstamp ? source : stamp(source, revision);
    const json = JSON.stringify(stamped);
    let stored: Uint8Array | undefined;
    try {
      // Before anything is frozen or counted as prepared, so a value that cannot be encrypted fails
      // this write only and leaves the writer's object as it was.
      stored = this.encode?.(key, json);
    } catch (err) {
      unstamp?.();
      throw err;
    }
    const object = handOver ? adoptFrozen(stamped, json) : parseFrozen(json);
    const event: StoreEvent = { type, key, object, revision };
    if (prev) event.prevObject = prev.object;
    const result: StoredObject = Object.freeze({ key, object, revision });
    const write: PreparedWrite = { event: Object.freeze(event), result, json, prevRevision: prev?.revision ?? null };
    if (stored) write.stored = stored;
    return write;
  }

  /** Applies a prepared write; it must be the next revision. */
  apply({ event, result }: PreparedWrite): void {
    if (event.revision !== this.rev + 1) throw new Error(`out-of-order write: ${event.revision} after ${this.rev}`);
    // A key's pending entry is its newest prepared value, which equals `current` once applied.
    if (this.pendingCount > 0 && --this.pendingCount === 0) this.pending.clear();
    this.setCurrent(event, result);
    this.rev = event.revision;
    this.history.push(event);
    this.historyIndex.add(event.key, event.revision);
    if (this.history.length - this.head > this.historyLimit) {
      const gone = this.history[this.head]!;
      const resource = resourceOf(gone.key);
      if (resource !== undefined) this.dropped.set(resource, gone.revision);
      this.head++;
      this.compacted++;
      // Drop the consumed prefix now and then instead of shifting on every write.
      if (this.head >= this.historyLimit) {
        this.history = this.history.slice(this.head);
        this.head = 0;
        this.historyIndex.trim(this.compacted);
      }
    }
  }

  private setCurrent({ key, type }: StoreEvent, result: StoredObject): void {
    if (type === 'DELETED') {
      if (!this.current.delete(key)) return;
      const keys = this.ordered();
      const index = lowerBound(keys, key);
      if (keys[index] === key) keys.splice(index, 1);
      return;
    }
    // A create was prepared against every write before it, applied before it: its key is new.
    if (type === 'ADDED') this.added.push(key);
    this.current.set(key, result);
  }

  /** Every current key in order: `keys` with `added` merged in. */
  private ordered(): string[] {
    if (this.added.length > 0) {
      this.keys = mergeSorted(this.keys, this.added.sort(compareKeys));
      this.added = [];
    }
    return this.keys;
  }

  /**
   * Loads persisted state: the current values, the kept events (ascending, contiguous, ending at
   * `revision`) and the revision. Only valid on an empty index.
   */
  restore(current: StoredObject[], events: StoreEvent[], revision: number): void {
    for (const item of current) this.current.set(item.key, Object.freeze(item));
    this.keys = [...this.current.keys()].sort(compareKeys);
    const kept = events.slice(Math.max(0, events.length - this.historyLimit));
    const first = kept[0]?.revision ?? revision + 1;
    kept.forEach((event, i) => {
      if (event.revision !== first + i) throw new Error(`event log has a gap before revision ${event.revision}`);
    });
    if (kept.length > 0 && first + kept.length - 1 !== revision) throw new Error('event log does not end at the store revision');
    this.history = kept;
    for (const event of kept) this.historyIndex.add(event.key, event.revision);
    this.rev = revision;
    this.compacted = first - 1;
    this.floor = this.compacted;
  }

  /**
   * Puts `item` in place of the key's current value if that is still the write at `item.revision`:
   * a value restored unread (encryption at rest whose KMS plugin was down), read now.
   */
  reveal(item: StoredObject): void {
    if (this.current.get(item.key)?.revision === item.revision) this.current.set(item.key, Object.freeze(item));
  }

  /** Replaces the kept event at `revision`, if still kept, with `read(event)`: the same write, its values read now. */
  revealEvent(revision: number, read: (event: StoreEvent) => StoreEvent): void {
    if (revision <= this.compacted || revision > this.rev) return;
    const i = this.head + (revision - this.compacted - 1);
    const event = this.history[i];
    if (event?.revision === revision) this.history[i] = read(event);
  }

  /**
   * Events after `fromRevision` under `prefix`, oldest first; Compacted when some are gone. Reads
   * only the kept events of the directories under `prefix` (HistoryIndex), not every later event.
   * Before `compacted`, a prefix within one resource is served while none of its events is gone:
   * those after `fromRevision` are then all after `compacted`, still kept.
   */
  eventsAfter(fromRevision: number, prefix: string): StoreEvent[] {
    if (fromRevision < this.compacted) {
      const oldest = this.oldestWatchable(prefix);
      if (fromRevision < oldest) throw this.compactedError(prefix, fromRevision, oldest);
    }
    const out: StoreEvent[] = [];
    for (const revision of this.historyIndex.revisionsAfter(fromRevision, prefix)) {
      const event = this.history[this.head + (revision - this.compacted - 1)]!;
      if (event.key.startsWith(prefix)) out.push(event);
    }
    return out;
  }

  range(options: RangeOptions): RangeResult {
    const { prefix, after, limit } = options;
    const at = options.revision !== undefined && options.revision > 0 ? options.revision : this.rev;
    if (at > this.rev) {
      throw new StoreError('FutureRevision', prefix, `revision ${at} is newer than the store revision ${this.rev}`, this.rev);
    }
    if (at < this.compacted) throw this.compactedError(prefix, at);
    if (at === this.rev) {
      const keys = this.ordered();
      const [first, last] = this.bounds(prefix);
      const start = after === undefined ? first : Math.max(first, upperBound(keys, after));
      const end = limit && limit > 0 ? Math.min(last, start + limit) : last;
      const items = keys.slice(start, end).map((key) => this.current.get(key)!);
      return { items, revision: at, remaining: last - end };
    }
    const past = this.stateAt(at, prefix);
    const keys = [...past.keys()].sort(compareKeys);
    const start = after === undefined ? 0 : upperBound(keys, after);
    const end = limit && limit > 0 ? Math.min(keys.length, start + limit) : keys.length;
    const items = keys.slice(start, end).map((key) => past.get(key)!);
    return { items, revision: at, remaining: keys.length - end };
  }

  /** How many current keys are under `prefix`. */
  count(prefix: string): number {
    const [first, last] = this.bounds(prefix);
    return last - first;
  }

  /** The index range of the current keys under `prefix` (they are contiguous in key order). */
  private bounds(prefix: string): [number, number] {
    const keys = this.ordered();
    const start = lowerBound(keys, prefix);
    return [start, partitionPoint(keys.length, (i) => keys[i]!.startsWith(prefix), start)];
  }

  /** The values under `prefix` as of revision `at`, by undoing the events after it. */
  private stateAt(at: number, prefix: string): Map<string, StoredObject> {
    const undone = new Map<string, StoredObject | undefined>();
    for (let i = this.head + (at - this.compacted); i < this.history.length; i++) {
      const event = this.history[i]!;
      if (!event.key.startsWith(prefix) || undone.has(event.key)) continue;
      const prev = event.prevObject;
      undone.set(event.key, prev && { key: event.key, object: prev, revision: revisionOf(prev) });
    }
    const state = new Map<string, StoredObject>();
    const [first, last] = this.bounds(prefix);
    const keys = this.ordered();
    for (let i = first; i < last; i++) {
      const key = keys[i]!;
      if (!undone.has(key)) state.set(key, this.current.get(key)!);
    }
    for (const [key, value] of undone) if (value) state.set(key, value);
    return state;
  }

  /** The oldest revision a watch under `prefix` can start from (`compacted` for a prefix wider than one resource). */
  private oldestWatchable(prefix: string): number {
    const resource = resourceOf(prefix);
    return resource === undefined ? this.compacted : Math.max(this.floor, this.dropped.get(resource) ?? 0);
  }

  private compactedError(key: string, revision: number, oldest = this.compacted): StoreError {
    return new StoreError('Compacted', key, `revision ${revision} has been compacted; the oldest available is ${oldest}`, oldest);
  }
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One sorted array of two (no key in both). */
function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const out = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i]! < b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}

/** First index whose key is >= `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  return partitionPoint(keys.length, (i) => keys[i]! < key);
}

/** First index whose key is > `key`. */
function upperBound(keys: readonly string[], key: string): number {
  return partitionPoint(keys.length, (i) => keys[i]! <= key);
}

/** `/registry/GROUP/RESOURCE/` of a key or of a prefix at least that long (storageKey's layout); undefined otherwise. */
function resourceOf(key: string): string | undefined {
  if (!key.startsWith('/registry/')) return undefined;
  const group = key.indexOf('/', 10);
  const resource = group < 0 ? -1 : key.indexOf('/', group + 1);
  return resource < 0 ? undefined : key.slice(0, resource + 1);
}
