/**
 * How the stores turn a caller's object into a stored one: an independent JSON copy stamped with
 * the write's revision and deep-frozen, so it can be shared between the current state, the event
 * history and every watcher without anyone being able to change it later.
 */
import type { KObject } from '../../api/meta.js';
import { rememberJson } from '../../lib/frozen-json.js';
import { deepFreeze, freezePlainJson } from '../../lib/json.js';

/** `object` with `metadata.resourceVersion` set to `revision` (a new top level and metadata; the rest is shared). */
export function stamp(object: KObject, revision: number): KObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } };
}

/**
 * Sets `metadata.resourceVersion` of `object` itself, as `stamp` would in a copy (the same key order);
 * returns what undoes it.
 */
export function stampInPlace(object: KObject, revision: number): () => void {
  const meta = object.metadata;
  if (!meta) {
    object.metadata = { resourceVersion: String(revision) };
    return () => delete object.metadata;
  }
  const had = Object.hasOwn(meta, 'resourceVersion');
  const before = meta.resourceVersion;
  meta.resourceVersion = String(revision);
  return () => {
    if (had) meta.resourceVersion = before;
    else delete meta.resourceVersion;
  };
}

/** Parses stored JSON into a deep-frozen object; responses and watch events reuse `json` for it. */
export function parseFrozen(json: string): KObject {
  const object = JSON.parse(json) as KObject;
  rememberJson(object, json);
  return deepFreeze(object) as KObject;
}

/**
 * The stored object for `stamped`, whose text is `json`, when the writer handed it over (it keeps
 * no reference to change later): `stamped` itself, frozen where it stands, when it is plain JSON,
 * so a write costs no parse of its own text and no second copy; otherwise (an undefined field, a
 * Date) the parse of `json`, which is what the value reads as after a restart.
 */
export function adoptFrozen(stamped: KObject, json: string): KObject {
  // Before freezing, so the text goes on the object itself; it is the object's JSON either way.
  rememberJson(stamped, json);
  return freezePlainJson(stamped) ? stamped : parseFrozen(json);
}

/** The revision a stored object was written at (its resourceVersion). */
export function revisionOf(object: KObject): number {
  return Number(object.metadata?.resourceVersion ?? 0);
}
