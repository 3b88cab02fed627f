/**
 * Field ownership on non-apply writes (create, update, the other patch types): the writer takes
 * every field it added or changed, from everyone (updates never conflict), and removed fields
 * leave every manager's set. The result is recorded as the writer's `Update` entry.
 */
import type { KObject, ManagedFieldsEntry } from '../../api/meta.js';
import { deepEqual } from '../../lib/json-value.js';
import type { Schema } from '../openapi/builder.js';
import { schemaFor } from '../openapi/schema-for.js';
import { FieldSet } from './field-set.js';
import { type Manager, decodeManagers, encodeManagers, objectFieldSet, putManager, sameManager, stripForFieldSet } from './managers.js';
import { type Step, fieldsV1Of, stepInto } from './typed.js';

export interface Comparison {
  /** Fields added, or leaves whose value changed. */
  changed: FieldSet;
  removed: FieldSet;
}

/** What changed between two objects, as field sets. */
export function compareObjects(oldObj: KObject | undefined, newObj: KObject, schema: Schema | undefined): Comparison {
  const newSet = objectFieldSet(newObj, schema);
  // A create changes every field: the set itself, not a copy rebuilt path by path.
  if (!oldObj) return { changed: newSet, removed: new FieldSet() };
  const oldSet = objectFieldSet(oldObj, schema);
  const changed = new FieldSet();
  // The new set's tree walked with both objects' values at each node, one step per edge: a leaf's
  // values are reached from its parent's instead of from the root (valueAt) for every member.
  const path: string[] = [];
  const visit = (node: FieldSet, was: FieldSet | undefined, o: Step, n: Step): void => {
    if (node.member && (!was?.member || (node.children.size === 0 && !deepEqual(o.value, n.value)))) changed.insert(path);
    for (const [el, child] of node.children) {
      path.push(el);
      visit(child, was?.children.get(el), stepInto(o, el), stepInto(n, el));
      path.pop();
    }
  };
  visit(newSet, oldSet, { value: oldObj, schema }, { value: newObj, schema });
  return { changed, removed: oldSet.difference(newSet) };
}

export interface UpdateEntry {
  manager: string;
  apiVersion: string;
  time: string;
  subresource?: string;
}

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

/**
 * The managers to start from: the ones the writer sent when it changed them (clients may reset
 * or migrate managedFields, as kubectl does when moving from client- to server-side apply),
 * otherwise the live object's, so clients unaware of managedFields cannot drop them.
 */
function baseManagers(old: KObject | undefined, next: KObject): Manager[] {
  const sent = next.metadata?.managedFields;
  const live = old?.metadata?.managedFields;
  if (sent && sent.length > 0 && !deepEqual(sent, live)) return decodeManagers(sent);
  return decodeManagers(live);
}

/** Records a non-apply write of `next` (over `old`, undefined on create) in its managedFields; mutates next. */
export function trackUpdate(old: KObject | undefined, next: KObject, gvk: Gvk, entry: UpdateEntry): void {
  const schema = schemaFor(gvk.group, gvk.version, gvk.kind);
  const mine: ManagedFieldsEntry = { manager: entry.manager, operation: 'Update', apiVersion: entry.apiVersion, time: entry.time };
  if (entry.subresource) mine.subresource = entry.subresource;
  const meta = (next.metadata ??= {});
  if (!old && !meta.managedFields?.length) {
    // A create that brings no managers: the writer's entry owns every field, its FieldsV1 built in
    // one walk (what the general path below makes through field sets, about a third of its cost).
    const fieldsV1 = fieldsV1Of(stripForFieldSet(next), schema);
    if (Object.keys(fieldsV1).length > 0) meta.managedFields = [{ ...mine, fieldsType: 'FieldsV1', fieldsV1 }];
    else delete meta.managedFields;
    return;
  }
  const { changed, removed } = compareObjects(old, next, schema);
  const lost = removed.isEmpty() ? changed : changed.union(removed);
  let managers = baseManagers(old, next).map((m) => ({ entry: m.entry, set: m.set.difference(lost) }));
  const prev = managers.find((m) => sameManager(m.entry, mine));
  if (!changed.isEmpty()) {
    const set = prev ? prev.set.union(changed) : changed;
    managers = putManager(managers, { entry: { ...mine, fieldsType: 'FieldsV1' }, set });
  }
  const encoded = encodeManagers(managers);
  if (encoded.length > 0) meta.managedFields = encoded;
  else delete meta.managedFields;
}
