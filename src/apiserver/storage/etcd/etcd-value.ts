/**
 * Objects as etcd values: JSON without metadata.resourceVersion, which is the key's mod revision
 * (kube-apiserver's etcd3 versioner stores objects the same way), transformed by encryption at rest
 * for the keys it claims, with the etcd key as the authenticated data, as kube-apiserver does (so
 * `etcdctl get` shows the same `k8s:enc:...` values).
 */
import type { KObject } from '../../../api/meta.js';
import { rememberJson } from '../../../lib/frozen-json.js';
import { deepFreeze, freezePlainJson } from '../../../lib/json.js';
import { parseFrozen } from '../frozen.js';
import { assertPlain, type ValueTransformer } from '../value-transformer.js';

/** The object's JSON without its resourceVersion, which etcd's revision stands for. */
export function encode(object: KObject): Buffer {
  const { resourceVersion: _, ...metadata } = object.metadata ?? {};
  return Buffer.from(JSON.stringify({ ...object, metadata }));
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
 * where it lies; undefined when its metadata cannot be found in the text, or when it mentions a
 * resourceVersion anywhere (an Event's involvedObject does).
 */
function stampedText(text: string, revision: number): string | undefined {
  const span = text.includes('"resourceVersion"') ? undefined : metadataSpan(text);
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
export function decode(json: Uint8Array, revision: number): KObject {
  const text = Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8');
  const stamped = stampedText(text, revision);
  if (stamped !== undefined) return parseFrozen(stamped);
  const object = JSON.parse(text) as KObject;
  object.metadata = { ...object.metadata, resourceVersion: String(revision) };
  return deepFreeze(object) as KObject;
}

/**
 * What `decode(encode(object), revision)` gives, without parsing: `object` itself under a new top
 * level and metadata (resourceVersion last), frozen where it stands, with the stamped text remembered
 * for it, when the writer handed it over (StoreWriteOptions.handOver) and it is plain JSON; otherwise
 * (an undefined field, a Date, a text `decode` parses) the decode of `json`, which is how the value
 * reads back. `json` must be `encode(object)`, and `object` unchanged since.
 */
export function adopt(object: KObject, json: Buffer, revision: number): KObject {
  const text = stampedText(json.toString('utf8'), revision);
  if (text === undefined) return decode(json, revision);
  const { resourceVersion: _, ...metadata } = object.metadata ?? {};
  const stamped: KObject = { ...object, metadata: { ...metadata, resourceVersion: String(revision) } };
  if (!freezePlainJson(stamped)) return parseFrozen(text);
  rememberJson(stamped, text);
  return stamped;
}

/** A decoded object as it reads at another revision (a deleted one at the delete's). */
export function atRevision(object: KObject, revision: number): KObject {
  return deepFreeze({ ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } }) as KObject;
}

/** How values are stored in etcd: `key` is the Store key, `etcdKey` the etcd key it is stored under. */
export class EtcdValues {
  constructor(private readonly transformer: ValueTransformer | undefined) {}

  /** The etcd value of `json` (from `encode`). Throws StoreError 'Unavailable' when a KMS plugin is needed and down. */
  seal(key: string, etcdKey: string, json: Buffer): Buffer {
    const transform = this.transformer?.forKey(key);
    return transform ? Buffer.from(transform.toStorage(json, etcdKey)) : json;
  }

  /** Whether a value encryption at rest claims was stored otherwise than it would be now. */
  isStale(key: string, value: Uint8Array): boolean {
    return this.transformer?.forKey(key)?.isStale(value) ?? false;
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
