/**
 * How the stores turn a caller's object into a stored one: an independent JSON copy stamped with
 * the write's revision and deep-frozen, so it can be shared between the current state, the event
 * history and every watcher without anyone being able to change it later.
 */
import type { KObject } from '../../api/meta.js';
import { rememberJson } from '../../lib/frozen-json.js';
import { deepFreeze } from '../../lib/json.js';


/** The JSON text of `object` with `metadata.resourceVersion` set to `revision`. */
export function stampJson(object: KObject, revision: number): string {
  return JSON.stringify({ ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } });
}

/** Parses stored JSON into a deep-frozen object; responses and watch events reuse `json` for it. */
export function parseFrozen(json: string): KObject {
  const object = deepFreeze(JSON.parse(json) as KObject) as KObject;
  rememberJson(object, json);
  return object;
}

/** The revision a stored object was written at (its resourceVersion). */
export function revisionOf(object: KObject): number {
  return Number(object.metadata?.resourceVersion ?? 0);
}
