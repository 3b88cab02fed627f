/**
 * The storage contract of the embedded API server. It is deliberately the shape of etcd's API
 * (a single revision counter over all writes, compare-and-swap on a key's revision, range reads
 * at a revision, watch from a revision) so an etcd backend can replace the built-in ones and
 * several API server replicas can share it.
 *
 * Every object a store returns carries `metadata.resourceVersion` set to the revision of the
 * write that produced it (etcd's modRevision), as kube-apiserver's etcd3 versioner does.
 * Objects handed out are never mutated by the store afterwards; callers must not mutate them
 * either (clone before changing).
 */
import type { KObject } from '../../api/meta.js';
import { AnswerError } from '../../lib/answer-error.js';

/**
 * How a write may treat the object it is given. Without options the store keeps a copy, and the
 * caller may go on changing its object.
 */
export interface StoreWriteOptions {
  /**
   * The caller keeps no reference to the object (it built it for this write and will not read or
   * change it again): a store may freeze it and keep it as the stored object instead of a copy,
   * once the write is accepted. A write refused before that (KeyExists, Conflict) leaves it as it was.
   */
  handOver?: boolean;
}

export interface StoredObject {
  key: string;
  object: KObject;
  /** Revision of the last write to this key (etcd modRevision). */
  revision: number;
  /**
   * Set by `get` when encryption at rest stored the value otherwise than it would store it now (an
   * older key, another provider, plaintext): an update that changes nothing still rewrites it, so
   * `kubectl replace` re-encrypts, as kube-apiserver's stale reads make it.
   */
  stale?: boolean;
}

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: StoreEventType;
  key: string;
  /** The new state; for DELETED the last state with resourceVersion set to the delete's revision. */
  object: KObject;
  /** The state before this write (absent for ADDED), so watchers can see selector transitions. */
  prevObject?: KObject;
  revision: number;
  /**
   * `object`'s compact JSON (what lib/frozen-json's compactJson gives for it), when the store has it
   * without serialising: set on the events a relaying watcher receives (WatchOptions.relay).
   */
  text?: string;
}

export interface RangeOptions {
  /** Keys starting with this prefix (use a trailing '/'). */
  prefix: string;
  /** Only keys strictly greater than this one (pagination). */
  after?: string;
  /** At most this many items; absent or 0 means all. */
  limit?: number;
  /** Read the state as of this revision (MVCC snapshot). Absent or <= 0: the latest, as in etcd. */
  revision?: number;
}

export interface RangeResult {
  items: StoredObject[];
  /** The revision the read was served at: the store's revision, or `RangeOptions.revision`. */
  revision: number;
  /** Number of keys under the prefix after the returned ones (0 when the page is the last). */
  remaining: number;
}

export type StoreErrorCode =
  /** create on a key that exists */
  | 'KeyExists'
  /** update/delete of a key that does not exist */
  | 'KeyNotFound'
  /** compare-and-swap failed: the key's revision differs from the expected one */
  | 'Conflict'
  /** the requested revision has been compacted away (410 Expired upstream) */
  | 'Compacted'
  /** the requested revision is newer than the store's */
  | 'FutureRevision'
  /** the backend cannot be reached or has no quorum (etcd down): 503 */
  | 'Unavailable'
  /** the backend did not answer in time: 504 */
  | 'Timeout'
  /** a stored value cannot be decoded (another writer's, or damaged): 500 InternalError, as upstream */
  | 'Undecodable';

/** The codes that answer a request (404, 409, 410, a revision too new) rather than report a failure. */
const ANSWERS: ReadonlySet<StoreErrorCode> = new Set<StoreErrorCode>(['KeyExists', 'KeyNotFound', 'Conflict', 'Compacted', 'FutureRevision']);

/** Answers are made without a stack (lib/answer-error.ts); failures (unavailable, timeout, undecodable) keep theirs. */
export class StoreError extends AnswerError {
  constructor(
    readonly code: StoreErrorCode,
    readonly key: string,
    message: string,
    /**
     * For Compacted: compactedRevision(), the oldest start revision still served (upstream's
     * "too old resource version: N (M)" prints M as this minus one). For Conflict: the key's revision.
     */
    readonly revision?: number,
  ) {
    super(message, !ANSWERS.has(code));
    this.name = 'StoreError';
  }
}

export function isStoreError(e: unknown, code: StoreErrorCode): boolean {
  return e instanceof StoreError && e.code === code;
}

/** A lost compare-and-swap race: the object changed or vanished since it was read, so retry. */
export function isRaceError(e: unknown): boolean {
  return isStoreError(e, 'Conflict') || isStoreError(e, 'KeyNotFound');
}

export interface WatchHandle {
  /** Stops delivery; idempotent. */
  stop(): void;
}

export interface WatchOptions {
  /** Deliver every event with revision > fromRevision, in revision order, then live events. */
  fromRevision: number;
  onEvent: (event: StoreEvent) => void;
  /** Called at most once if the watch cannot continue (e.g. Compacted); no events follow. */
  onError?: (err: StoreError) => void;
  /**
   * Progress (etcd's progress notifications): every event up to `revision` has been delivered, so
   * a watch resumed from it misses nothing. Backends without such notifications never call it.
   */
  onProgress?: (revision: number) => void;
  /**
   * Only events whose object (or previous object) has this field value can interest the watcher (a
   * `metadata.name=` or pods' `spec.nodeName=` selector): a store may skip the others without testing
   * them, as the cacher's trigger functions do. A hint: a store that ignores it delivers everything.
   */
  trigger?: WatchTrigger;
  /**
   * The watcher sends an event's `text` when it has one and reads `object` and `prevObject` only when
   * it needs them (a watcher without a selector, sending objects as they are): a store may deliver
   * events whose objects are built when first read (etcd relays what it receives without parsing it).
   * A stored value that is not JSON still ends every watch, this one too, with 'Undecodable'. A hint:
   * a store that ignores it builds every object before delivery.
   */
  relay?: boolean;
}

export interface WatchTrigger {
  field: 'metadata.name' | 'spec.nodeName';
  value: string;
}

export interface Store {
  /** The revision of the newest write (0 for an empty store). */
  currentRevision(): number;
  /** The oldest revision still readable by range/watch; older ones give Compacted. */
  compactedRevision(): number;
  /**
   * True when a write's watch events reach this process's watchers before the write's promise
   * settles (the stores that live in the process publish at commit): a copy kept current by a watch
   * then holds every write acknowledged before a request that reads it. On etcd a write made through
   * another replica reaches this one's watch a round trip after its acknowledgement.
   */
  readonly deliversBeforeAck?: boolean;

  get(key: string): Promise<StoredObject | undefined>;
  /**
   * A recent state of the key the store holds without asking its backend (etcd: the newest this
   * replica wrote, read or watched), or undefined. It may be stale: an update that compares its
   * revision then fails with Conflict. Stores whose `get` is served from memory need not have it.
   */
  cached?(key: string): StoredObject | undefined;
  /**
   * The key's committed state when the store can tell it without waiting (the index of the stores
   * that live in the process): what `get` would resolve to now, null when the key is absent. Undefined
   * when only `get` can tell (a value still to be read or decrypted, a remote backend). Lets a write
   * read its namespace or current object without a turn of the event loop per read.
   */
  readNow?(key: string): StoredObject | null | undefined;
  /** Fails with KeyExists when the key is present. */
  create(key: string, object: KObject, options?: StoreWriteOptions): Promise<StoredObject>;
  /**
   * Replaces the value. With `expectedRevision`, fails with Conflict unless the key's current
   * revision equals it (compare-and-swap). Fails with KeyNotFound when the key is absent.
   */
  update(key: string, object: KObject, expectedRevision?: number, options?: StoreWriteOptions): Promise<StoredObject>;
  /** Removes the key; the returned object is its last state at the delete's revision. */
  delete(key: string, expectedRevision?: number): Promise<StoredObject>;

  range(options: RangeOptions): Promise<RangeResult>;
  /**
   * How many keys are under `prefix`, their values left unread (apiserver_storage_objects), as
   * upstream counts with etcd's count-only range: so a count never waits for, or fails on, a KMS plugin.
   */
  count(prefix: string): Promise<number>;
  /**
   * Reports Compacted through `onError`, asynchronously, when `fromRevision` is older than the
   * history kept; never throws for it. `onEvent` is never called inside `watch()` or a write call,
   * and must not throw.
   */
  watch(prefix: string, options: WatchOptions): WatchHandle;

  /**
   * Rejects when the backend cannot serve (etcd unreachable or without quorum, SQLite's writer
   * thread gone); the memory store has nothing to check. Feeds /readyz and /healthz.
   */
  checkHealth?(): Promise<void>;

  /** Bytes the backend's database takes on disk, and where it is (apiserver_storage_db_total_size_in_bytes). */
  sizeBytes?(): Promise<{ endpoint: string; bytes: number }[]>;
  close(): Promise<void>;
}

/**
 * The storage key of an object: `/registry/<group or core>/<plural>/[<namespace>/]<name>`.
 * A collection prefix is the same with the name (and namespace) left off, ending in '/'.
 */
export function storageKey(group: string, plural: string, namespace: string | undefined, name?: string): string {
  const base = `/registry/${group === '' ? 'core' : group}/${plural}/`;
  if (namespace === undefined) return name === undefined ? base : base + name;
  return name === undefined ? `${base}${namespace}/` : `${base}${namespace}/${name}`;
}
