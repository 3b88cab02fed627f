/**
 * Objects as etcd values: JSON without metadata.resourceVersion, which is the key's mod revision
 * (kube-apiserver's etcd3 versioner stores objects the same way), transformed by encryption at rest
 * for the keys it claims, with the etcd key as the authenticated data, as kube-apiserver does (so
 * `etcdctl get` shows the same `k8s:enc:...` values).
 */
import type { KObject } from '../../../api/meta.js';
import { deepFreeze } from '../../../lib/json.js';
import { isJsonText } from '../../../lib/json-syntax.js';
import { adoptFrozen, parseFrozen } from '../frozen.js';
import { assertPlain, type ValueTransformer } from '../value-transformer.js';
import type { Revisioned } from './recent-objects.js';

/**
 * The object's JSON without its resourceVersion, which etcd's revision stands for. A string: the
 * transaction encodes it straight into its frame (no Buffer of its own), and the write's reply and
 * watch event stamp it without decoding octets back into text.
 */
export function encode(object: KObject): string {
  const { resourceVersion: _, ...metadata } = object.metadata ?? {};
  return JSON.stringify({ ...object, metadata });
}

const METADATA = '"metadata":{';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** The index of the quote closing the JSON string that opens at `i`. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j;
  }
  return text.length;
}

/**
 * Where the top-level `"metadata":{` of compact JSON object text starts, and the index of the `}`
 * that closes it; undefined when the text has no such object (or is not compact, as another writer
 * may have stored it).
 */
function metadataSpan(text: string): { start: number; end: number } | undefined {
  const start = text.indexOf(METADATA);
  if (start < 0) return undefined;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (i === start) {
      // The first occurrence is the top-level key only when it is met outside strings at depth 1.
      if (depth !== 1) return undefined;
      i += METADATA.length - 1;
      depth++;
      continue;
    }
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
    if (i > start && depth < 2) return depth === 1 && c !== QUOTE ? { start, end: i } : undefined;
  }
  return undefined;
}

/**
 * `text` (from `encode`) with `"resourceVersion":"revision"` as the last key of its metadata, stamped
 * where it lies; undefined when its metadata cannot be found in the text, when it mentions a
 * resourceVersion anywhere (an Event's involvedObject does), or when it holds a line break (not
 * compact: another writer's), which would split a watch event's line.
 */
function stampedText(text: string, revision: number): string | undefined {
  const span = text.includes('"resourceVersion"') || text.includes('\n') ? undefined : metadataSpan(text);
  if (!span) return undefined;
  const rv = `"resourceVersion":"${revision}"`;
  const empty = span.end === span.start + METADATA.length;
  return `${text.slice(0, span.end)}${empty ? rv : `,${rv}`}${text.slice(span.end)}`;
}

/**
 * JSON from `encode` as the deep-frozen object with resourceVersion set to `revision` (the last key
 * of its metadata). The text is stamped where it lies and remembered with the object, so responses
 * and watch events send it without serialising the object again, as for the SQLite store's objects.
 * A value whose text cannot be stamped (`stampedText`) is parsed and stamped as an object instead.
 */
export function decode(json: Uint8Array | string, revision: number): KObject {
  const text = typeof json === 'string' ? json : utf8(json);
  const stamped = stampedText(text, revision);
  return stamped !== undefined ? parseFrozen(stamped) : decodeUnstamped(text, revision);
}

function utf8(json: Uint8Array): string {
  return Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8');
}

function decodeUnstamped(text: string, revision: number): KObject {
  const object = JSON.parse(text) as KObject;
  object.metadata = { ...object.metadata, resourceVersion: String(revision) };
  return deepFreeze(object) as KObject;
}

/**
 * A value as a watch relays it (`relay`): its stamped text at once, which is all a watcher without a
 * selector sends, and the object `decode` would give parsed only when something reads `object` (a
 * selector, a previous state, an update, a watcher of another representation), then shared.
 */
export class RelayedValue implements Revisioned {
  private parsed: KObject | undefined;

  constructor(
    /** The value's JSON with its resourceVersion stamped: `compactJson` of `object`. */
    readonly text: string,
    readonly revision: number,
  ) {}

  get object(): KObject {
    return (this.parsed ??= parseFrozen(this.text));
  }

  /** The object, when something has read or settled it. */
  get built(): KObject | undefined {
    return this.parsed;
  }

  /** Makes `object` the writer's own (`adopt` of what it handed over), when nothing has parsed the text yet. */
  settle(object: KObject): KObject {
    return (this.parsed ??= object);
  }
}

/**
 * The value's `text` (from `encode`) at `revision` for a watch: a RelayedValue when it can be stamped
 * where it lies, else decoded now. Either way a value that is not JSON (another tool may have written
 * anything) throws, as its decode would: a relayed text reaches clients as it is.
 */
function relayText(text: string, revision: number, ownEncoding: boolean): Revisioned {
  const stamped = stampedText(text, revision);
  if (stamped === undefined) return { object: decodeUnstamped(text, revision), revision };
  // `encode` wrote this very text (the write in flight it was compared with): JSON, without a scan to prove it.
  if (!ownEncoding && !isJsonText(text)) throw new SyntaxError(`the value at revision ${revision} is not JSON`);
  return new RelayedValue(stamped, revision);
}

/**
 * What `decode(encode(object), revision)` gives, without parsing: `object` itself under a new top
 * level and metadata (resourceVersion last), frozen where it stands, with the stamped text remembered
 * for it, when the writer handed it over (StoreWriteOptions.handOver) and it is plain JSON; otherwise
 * (an undefined field, a Date, a text `decode` parses) the decode of `json`, which is how the value
 * reads back. `json` must be `encode(object)`, and `object` unchanged since; `stampedJson`, when
 * given, its stamped text at `revision` (a RelayedValue's).
 */
export function adopt(object: KObject, json: string, revision: number, stampedJson?: string): KObject {
  const text = stampedJson ?? stampedText(json, revision);
  if (text === undefined) return decode(json, revision);
  const { resourceVersion: _, ...metadata } = object.metadata ?? {};
  return adoptFrozen({ ...object, metadata: { ...metadata, resourceVersion: String(revision) } }, text);
}

/** A decoded object as it reads at another revision (a deleted one at the delete's). */
export function atRevision(object: KObject, revision: number): KObject {
  return deepFreeze({ ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } }) as KObject;
}

/** How values are stored in etcd: `key` is the Store key, `etcdKey` the etcd key it is stored under. */
export class EtcdValues {
  constructor(private readonly transformer: ValueTransformer | undefined) {}

  /** The etcd value of `json` (from `encode`). Throws StoreError 'Unavailable' when a KMS plugin is needed and down. */
  seal(key: string, etcdKey: string, json: string): Buffer | string {
    const transform = this.transformer?.forKey(key);
    return transform ? Buffer.from(transform.toStorage(Buffer.from(json), etcdKey)) : json;
  }

  /** Whether a value encryption at rest claims was stored otherwise than it would be now. */
  isStale(key: string, value: Uint8Array): boolean {
    return this.transformer?.forKey(key)?.isStale(value) ?? false;
  }

  /**
   * The value for a watch to relay (see `relay`); undefined when encryption at rest claims the key.
   * `mine`: what this replica's write of the key in flight stored (`encode`'s output); a value that
   * reads as the same text is known JSON.
   */
  relay(key: string, value: Uint8Array, revision: number, mine?: string): Revisioned | undefined {
    if (this.transformer?.forKey(key)) return undefined;
    const text = utf8(value);
    if (text === mine) return relayText(text, revision, true);
    assertPlain(value, key);
    return relayText(text, revision, false);
  }

  /** The object an etcd value holds; a promise only when a KMS plugin had to decrypt its DEK. */
  open(key: string, etcdKey: string, value: Uint8Array, revision: number): KObject | Promise<KObject> {
    const transform = this.transformer?.forKey(key);
    if (!transform) {
      assertPlain(value, key);
      return decode(value, revision);
    }
    const plain = transform.fromStorage(value, etcdKey);
    return plain instanceof Uint8Array ? decode(plain, revision) : plain.then((p) => decode(p, revision));
  }
}
