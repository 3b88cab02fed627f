/**
 * Objects seen through their OpenAPI schema the way server-side apply sees them: structs and maps
 * are granular, lists follow `x-kubernetes-list-type` (atomic: one value; set: members by value;
 * map: items by `x-kubernetes-list-map-keys`). Free-form parts (no schema, preserved unknown
 * fields) are granular maps with atomic lists, as upstream's deduced type is.
 */
import type { Schema } from '../openapi/builder.js';
import { FieldSet, fieldKey, itemKey, valueKey } from './field-set.js';
import { isRecord } from '../../lib/json.js';

type Obj = Record<string, unknown>;


export type ListType = { type: 'atomic' } | { type: 'set' } | { type: 'map'; keys: string[] };

export function listType(schema: Schema | undefined): ListType {
  const t = schema?.['x-kubernetes-list-type'];
  const keys = schema?.['x-kubernetes-list-map-keys'];
  if (t === 'set') return { type: 'set' };
  if (t === 'map' && Array.isArray(keys) && keys.length > 0) return { type: 'map', keys: keys as string[] };
  return { type: 'atomic' };
}

/** The schema of a field of an object value; undefined (free-form) when not described. */
export function fieldSchema(schema: Schema | undefined, name: string): Schema | undefined {
  const props = schema?.properties as Record<string, Schema> | undefined;
  return props?.[name] ?? (schema?.additionalProperties as Schema | undefined);
}

export const itemSchema = (schema: Schema | undefined): Schema | undefined => schema?.items as Schema | undefined;

/** True when the object-valued node is replaced whole (`x-kubernetes-map-type: atomic`). */
const atomicMap = (schema: Schema | undefined): boolean => schema?.['x-kubernetes-map-type'] === 'atomic';

/** The element key of a list item, by the list's type; undefined for atomic lists. */
export function elementKey(item: unknown, lt: ListType): string | undefined {
  if (lt.type === 'set') return valueKey(item);
  if (lt.type === 'map' && isRecord(item)) return itemKey(item, lt.keys);
  return undefined;
}

/** What a walk of a value's fields reports: each path element it enters and leaves, and each path that is a member. */
interface FieldSink {
  enter(el: string): void;
  leave(): void;
  member(): void;
}

/**
 * Walks the fields a value sets, telling `sink`: leaves (scalars, atomic lists and maps, empty
 * objects), each item of a keyed list (a member with its own fields below) and each member of a set
 * list. An item's membership is reported before its fields.
 */
function walkFields(value: unknown, schema: Schema | undefined, sink: FieldSink): void {
  const walk = (v: unknown, s: Schema | undefined): void => {
    if (Array.isArray(v)) {
      const lt = listType(s);
      if (lt.type === 'atomic') {
        sink.member();
        return;
      }
      for (const item of v) {
        const key = elementKey(item, lt);
        if (key === undefined) continue;
        sink.enter(key);
        sink.member();
        if (lt.type === 'map' && isRecord(item)) walkObject(item, itemSchema(s));
        sink.leave();
      }
      return;
    }
    if (isRecord(v) && !atomicMap(s) && Object.keys(v).length > 0) {
      walkObject(v, s);
      return;
    }
    sink.member();
  };
  const walkObject = (o: Obj, s: Schema | undefined): void => {
    for (const k in o) {
      const v = o[k];
      if (v === undefined || !Object.hasOwn(o, k)) continue;
      sink.enter(fieldKey(k));
      walk(v, fieldSchema(s, k));
      sink.leave();
    }
  };
  if (isRecord(value)) walkObject(value, schema);
}

/** The set of fields a value sets (see walkFields). */
export function fieldSetOf(value: unknown, schema: Schema | undefined): FieldSet {
  const set = new FieldSet();
  // One path, pushed and popped as the walk goes (insert copies nothing), instead of a new array per field.
  const path: string[] = [];
  walkFields(value, schema, { enter: (el) => path.push(el), leave: () => path.pop(), member: () => set.insert(path) });
  return set;
}

const hasKeys = (o: Obj): boolean => {
  for (const _ in o) return true;
  return false;
};

/**
 * `fieldSetOf(value, schema).toFieldsV1()` built in one walk, without the set's nodes: a create's
 * managedFields entry. A node is made when a member at or below it is reported (a field whose
 * fields are all undefined sets nothing), and a member that has fields below it lists `.` first.
 */
export function fieldsV1Of(value: unknown, schema: Schema | undefined): Obj {
  const root: Obj = {};
  const path: string[] = [];
  // nodes[i] is the node at path[0..i), made so far.
  const nodes: Obj[] = [root];
  const made = (depth: number): Obj => {
    let node = nodes[nodes.length - 1]!;
    let fresh = false;
    while (nodes.length <= depth) {
      const el = path[nodes.length - 1]!;
      let child = node[el] as Obj | undefined;
      if (child === undefined) {
        // A node made earlier without keys is a member leaf so far; with a field below it, it says so with `.`.
        if (!fresh && node !== root && !hasKeys(node)) node['.'] = {};
        child = node[el] = {};
        fresh = true;
      }
      nodes.push(child);
      node = child;
    }
    return node;
  };
  walkFields(value, schema, {
    enter: (el) => path.push(el),
    leave: () => {
      path.pop();
      if (nodes.length > path.length + 1) nodes.length = path.length + 1;
    },
    member: () => {
      const node = made(path.length);
      if (!hasKeys(node) || '.' in node || path.length === 0) return;
      // Fields were reported below it before it was (a keyed item repeated): `.` still comes first.
      const parent = nodes[nodes.length - 2]!;
      const marked: Obj = { '.': {}, ...node };
      parent[path[path.length - 1]!] = marked;
      nodes[nodes.length - 1] = marked;
    },
  });
  return root;
}

/** Finds the item of a list that an element key names. */
function findItem(list: unknown[], el: string, lt: ListType): number {
  return list.findIndex((item) => elementKey(item, lt) === el);
}

/** A value reached by following path elements from a root, with its schema; `found: false` once a step missed. */
export interface Step {
  found?: false;
  value?: unknown;
  schema: Schema | undefined;
}

const MISSED: Step = { found: false, schema: undefined };

/** One path element down from `at` (a field of an object, an item of a keyed or set list). */
export function stepInto(at: Step, el: string): Step {
  if (at.found === false) return MISSED;
  const cur = at.value;
  if (el.startsWith('f:')) {
    if (!isRecord(cur)) return MISSED;
    const name = el.slice(2);
    if (!(name in cur) || cur[name] === undefined) return MISSED;
    return { value: cur[name], schema: fieldSchema(at.schema, name) };
  }
  if (!Array.isArray(cur)) return MISSED;
  const i = findItem(cur, el, listType(at.schema));
  if (i < 0) return MISSED;
  return { value: cur[i], schema: itemSchema(at.schema) };
}

/** The value at a path, or `{ found: false }`. */
export function valueAt(root: unknown, path: readonly string[], schema: Schema | undefined): { found: boolean; value?: unknown } {
  let at: Step = { value: root, schema };
  for (const el of path) {
    at = stepInto(at, el);
    if (at.found === false) return { found: false };
  }
  return { found: true, value: at.value };
}

/**
 * Removes the value at a path in place. A map or list left empty by the removal goes too, as Go's
 * `omitempty` would drop it on the wire.
 */
export function removeAt(root: Obj, path: readonly string[], schema: Schema | undefined): void {
  const remove = (cur: unknown, s: Schema | undefined, i: number): boolean => {
    const el = path[i];
    if (el === undefined) return false;
    const last = i === path.length - 1;
    if (el.startsWith('f:')) {
      if (!isRecord(cur)) return false;
      const name = el.slice(2);
      if (!(name in cur)) return false;
      const child = fieldSchema(s, name);
      if (last || remove(cur[name], child, i + 1)) {
        const v = cur[name];
        const emptied = (Array.isArray(v) && v.length === 0) || (isRecord(v) && Object.keys(v).length === 0);
        if (last || emptied) delete cur[name];
      }
      return true;
    }
    if (!Array.isArray(cur)) return false;
    const idx = findItem(cur, el, listType(s));
    if (idx < 0) return false;
    if (last) cur.splice(idx, 1);
    else remove(cur[idx], itemSchema(s), i + 1);
    return true;
  };
  remove(root, schema, 0);
}

/**
 * The applied configuration merged into the live value: applied values win, structs and maps
 * merge per field, atomic lists are replaced, set lists are unions and keyed lists merge per item.
 */
export function mergeValue(live: unknown, applied: unknown, schema: Schema | undefined): unknown {
  if (isRecord(live) && isRecord(applied) && !atomicMap(schema)) {
    const out: Obj = { ...live };
    for (const [k, v] of Object.entries(applied)) {
      if (v !== undefined) out[k] = mergeValue(live[k], v, fieldSchema(schema, k));
    }
    return out;
  }
  if (Array.isArray(live) && Array.isArray(applied)) {
    const lt = listType(schema);
    if (lt.type === 'atomic') return applied;
    const out = [...live];
    for (const item of applied) {
      const key = elementKey(item, lt);
      const i = key === undefined ? -1 : out.findIndex((x) => elementKey(x, lt) === key);
      if (i < 0) out.push(item);
      else if (lt.type === 'map') out[i] = mergeValue(out[i], item, itemSchema(schema));
    }
    return out;
  }
  return applied;
}
