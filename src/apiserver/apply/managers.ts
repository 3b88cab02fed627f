/**
 * `metadata.managedFields` as a list of managers with their field sets, and the field set an
 * object's own content has (without the type meta and server-owned metadata, which nobody owns).
 */
import type { KObject, ManagedFieldsEntry } from '../../api/meta.js';
import type { Schema } from '../openapi/builder.js';
import { FieldSet } from './field-set.js';
import { fieldSetOf } from './typed.js';

/** Metadata fields the server owns; upstream strips them before computing field sets. */
const SERVER_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

export interface Manager {
  entry: ManagedFieldsEntry;
  set: FieldSet;
}

/**
 * The object's content as field sets see it: no apiVersion, kind or server-owned metadata. Built by
 * copying what stays (deleting keys from a spread copy left it a slow dictionary-mode object, which
 * every write's field-set walk then read).
 */
export function stripForFieldSet(obj: KObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in obj) {
    if (k === 'apiVersion' || k === 'kind' || !Object.hasOwn(obj, k)) continue;
    if (k !== 'metadata') {
      out[k] = obj[k];
      continue;
    }
    const source = obj.metadata as Record<string, unknown> | undefined;
    if (!source) {
      out.metadata = source;
      continue;
    }
    const meta: Record<string, unknown> = {};
    let kept = false;
    for (const m in source) {
      if (SERVER_META.has(m) || !Object.hasOwn(source, m)) continue;
      meta[m] = source[m];
      kept = true;
    }
    if (kept) out.metadata = meta;
  }
  return out;
}

export const objectFieldSet = (obj: KObject, schema: Schema | undefined): FieldSet => fieldSetOf(stripForFieldSet(obj), schema);

export function decodeManagers(entries: readonly ManagedFieldsEntry[] | undefined): Manager[] {
  return (entries ?? []).map((entry) => ({ entry, set: FieldSet.fromFieldsV1(entry.fieldsV1 ?? {}) }));
}

/** The entries to store: managers that still own something, with their current field sets. */
export function encodeManagers(managers: readonly Manager[]): ManagedFieldsEntry[] {
  return managers
    .filter((m) => !m.set.isEmpty())
    .map((m) => ({ ...m.entry, fieldsType: 'FieldsV1' as const, fieldsV1: m.set.toFieldsV1() }));
}

/**
 * Whether two entries are the same manager (upstream's manager identifier): manager, operation
 * and subresource, plus the apiVersion for Update entries only, so an applier stays one manager.
 */
export function sameManager(a: ManagedFieldsEntry, b: ManagedFieldsEntry): boolean {
  return (
    a.manager === b.manager &&
    a.operation === b.operation &&
    (a.subresource ?? '') === (b.subresource ?? '') &&
    (a.operation === 'Apply' || a.apiVersion === b.apiVersion)
  );
}

/** A manager as conflict messages print it: `"name"`, plus `using <apiVersion>` for updaters. */
export function printManager(e: ManagedFieldsEntry): string {
  let out = JSON.stringify(e.manager ?? '');
  if (e.subresource) out += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') out += ` using ${e.apiVersion ?? ''}`;
  return out;
}

/** Replaces (or appends) the entry of one manager, keeping the order of the others. */
export function putManager(managers: Manager[], m: Manager): Manager[] {
  const i = managers.findIndex((x) => sameManager(x.entry, m.entry));
  if (i < 0) return [...managers, m];
  const out = [...managers];
  out[i] = m;
  return out;
}

/**
 * Whether a write changes field ownership: it carries managedFields that differ from the live
 * ones other than in timestamps (such a write is stored even if nothing else changes).
 */
export function ownershipChanged(old: KObject, next: KObject): boolean {
  // A writer that sends no managedFields keeps the live ones.
  if (!next.metadata?.managedFields?.length) return false;
  const strip = (o: KObject): ManagedFieldsEntry[] => (o.metadata?.managedFields ?? []).map(({ time: _time, ...rest }) => rest);
  return JSON.stringify(strip(old)) !== JSON.stringify(strip(next));
}
