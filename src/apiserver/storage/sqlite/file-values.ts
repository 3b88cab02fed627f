/**
 * A SQLite file's values as the index needs them, JSON text: those encryption at rest transformed
 * are decrypted at open. A value that cannot be decrypted *yet* — its KMS plugin is down, a
 * StoreError 'Unavailable' — does not keep the store from opening, as kube-apiserver starts without
 * its KMS plugin: the value is kept as stored (UnreadValues) and the index holds the UNREAD marker
 * in its place, which the store never hands out. Reads and writes that meet it try the plugin again
 * and otherwise fail with its 503; a retry that reads a value puts it in the marker's place. Nothing
 * is written back: the file keeps its bytes as they are.
 */
import type { KObject } from '../../../api/meta.js';
import { StoreError, type StoreEvent } from '../store.js';
import { parseFrozen } from '../frozen.js';
import type { MvccIndex } from '../mvcc-index.js';
import { assertPlain, type ValueTransformer } from '../value-transformer.js';
import type { StoredFile } from './sqlite-worker.js';

/** Stands in the index for a value not decrypted yet; recognised by identity. */
export const UNREAD: KObject = Object.freeze({});

/**
 * How the current value of each key encryption at rest claims is stored (its bytes; PLAIN for JSON
 * text), at the revision it was written: enough to tell a stale value (see StoredObject.stale).
 */
export type Sealed = Map<string, { revision: number; value: Uint8Array }>;
const PLAIN = Buffer.from('{');

/** The file with each value as JSON text, or undefined where it is not read yet (`unread` keeps it). */
export type ReadFile = StoredFile<string | undefined> & { unreadableUpTo: number; sealed: Sealed; unread: UnreadValues | undefined };

/**
 * The file's values as JSON text: encrypted ones (stored as bytes) decrypted. A current value that
 * cannot be read for good fails the open: starting without it would serve a store that lost it.
 * History (older revisions, kept for watches) that no configured key reads any more — after a key
 * rotation removed the old key — is dropped as if compacted, as etcd's is: `unreadableUpTo` is the
 * newest such revision, and watches from before it get 410 Gone. Values a KMS plugin that is down
 * keeps from being read are left undefined, in `unread`.
 */
export async function readFile(file: StoredFile, transformer: ValueTransformer | undefined): Promise<ReadFile> {
  const pending: Promise<void>[] = [];
  let unreadableUpTo = 0;
  const sealed: Sealed = new Map();
  const unread = transformer && new UnreadValues(transformer);
  for (const row of file.kv) {
    if (transformer?.forKey(row.key)) sealed.set(row.key, { revision: row.revision, value: typeof row.value === 'string' ? PLAIN : row.value });
  }
  /** Reads `value` and hands its text to `set`; `later` keeps it for a retry when its plugin is down. */
  const plain = (key: string, value: string | Uint8Array, set: (text: string | undefined) => void, later: (bytes: Uint8Array) => void, history?: number): void => {
    const transform = transformer?.forKey(key);
    if (!transform) {
      assertPlain(value, key);
      if (typeof value !== 'string') set(Buffer.from(value).toString('utf8'));
      return;
    }
    const bytes = typeof value === 'string' ? Buffer.from(value) : value;
    const decoded = (out: Uint8Array): void => set(Buffer.from(out).toString('utf8'));
    const failed = (err: unknown): void => {
      if (isUnavailable(err)) {
        set(undefined);
        later(bytes);
        unread!.failed(err);
        return;
      }
      if (history !== undefined) {
        unreadableUpTo = Math.max(unreadableUpTo, history);
        return;
      }
      (err as Error).message = `cannot read ${key} from the store: ${(err as Error).message}`;
      throw err;
    };
    try {
      const out = transform.fromStorage(bytes, key);
      if (out instanceof Uint8Array) decoded(out);
      else pending.push(out.then(decoded, failed));
    } catch (err) {
      failed(err);
    }
  };
  // The rows are the worker's copies: decrypted in place.
  const read = file as StoredFile<string | Uint8Array | undefined>;
  for (const row of read.kv) {
    plain(row.key, row.value!, (text) => (row.value = text), (bytes) => unread!.current.set(row.key, { revision: row.revision, value: bytes }));
  }
  for (const row of read.events) {
    const entry = (): UnreadEvent => unread!.events.get(row.revision) ?? unread!.events.set(row.revision, { key: row.key }).get(row.revision)!;
    plain(row.key, row.value!, (text) => (row.value = text), (bytes) => (entry().value = bytes), row.revision);
    if (row.prev !== null) plain(row.key, row.prev!, (text) => (row.prev = text), (bytes) => (entry().prev = bytes), row.revision);
  }
  await Promise.all(pending);
  for (const revision of unread?.events.keys() ?? []) if (revision <= unreadableUpTo) unread!.events.delete(revision);
  return {
    ...(read as StoredFile<string | undefined>),
    events: (read as StoredFile<string | undefined>).events.filter((e) => e.revision > unreadableUpTo),
    unreadableUpTo,
    sealed,
    unread: unread?.empty() === false ? unread : undefined,
  };
}

function isUnavailable(err: unknown): err is StoreError {
  return err instanceof StoreError && err.code === 'Unavailable';
}

/** The values of one kept event not read yet. */
interface UnreadEvent {
  key: string;
  value?: Uint8Array;
  prev?: Uint8Array;
}

/** The values left unread at open, as stored, until their KMS plugin can decrypt them. */
export class UnreadValues {
  readonly current = new Map<string, { revision: number; value: Uint8Array }>();
  readonly events = new Map<number, UnreadEvent>();
  /** Why the last value that could not be read could not (a KMS plugin's Unavailable, or for good). */
  private lastError: Error | undefined;
  private attempt: Promise<void> | undefined;

  constructor(private readonly transformer: ValueTransformer) {}

  empty(): boolean {
    return this.current.size === 0 && this.events.size === 0;
  }

  failed(err: Error): void {
    this.lastError = err;
  }

  /** What a request that needs an unread value gets: its plugin's 503 (a 500 if it now fails for good), naming what it asked for. */
  errorFor(key: string): Error {
    const message = this.lastError?.message ?? 'not decrypted yet';
    return isUnavailable(this.lastError) ? new StoreError('Unavailable', key, message) : new Error(`cannot read ${key} from the store: ${message}`);
  }

  /** Tries every unread value again (one attempt at a time, shared) and puts those read into `index`. */
  retry(index: MvccIndex): Promise<void> {
    this.attempt ??= this.readAll(index).finally(() => (this.attempt = undefined));
    return this.attempt;
  }

  private async readAll(index: MvccIndex): Promise<void> {
    const current = [...this.current].map(async ([key, { revision, value }]) => {
      const object = await this.read(key, value);
      if (object === undefined) return;
      index.reveal({ key, object, revision });
      this.current.delete(key);
    });
    const events = [...this.events].map(async ([revision, entry]) => {
      const [object, prevObject] = await Promise.all([entry.value && this.read(entry.key, entry.value), entry.prev && this.read(entry.key, entry.prev)]);
      if (object !== undefined) delete entry.value;
      if (prevObject !== undefined) delete entry.prev;
      if (object !== undefined || prevObject !== undefined) index.revealEvent(revision, (event): StoreEvent => withValues(event, object, prevObject));
      if (!entry.value && !entry.prev) this.events.delete(revision);
    });
    await Promise.all([...current, ...events]);
  }

  /** The value as an object, or undefined (the reason kept for errorFor) when it still cannot be read. */
  private async read(key: string, value: Uint8Array): Promise<KObject | undefined> {
    try {
      const transform = this.transformer.forKey(key);
      if (!transform) throw new Error(`${key}: its resource is no longer in the encryption configuration`);
      return parseFrozen(Buffer.from(await transform.fromStorage(value, key)).toString('utf8'));
    } catch (err) {
      this.lastError = err instanceof Error ? err : new Error(String(err));
      return undefined;
    }
  }
}

function withValues(event: StoreEvent, object: KObject | undefined, prevObject: KObject | undefined): StoreEvent {
  const out: StoreEvent = { type: event.type, key: event.key, object: object ?? event.object, revision: event.revision };
  if (prevObject ?? event.prevObject) out.prevObject = prevObject ?? event.prevObject;
  return Object.freeze(out);
}
