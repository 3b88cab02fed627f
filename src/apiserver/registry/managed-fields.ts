/**
 * A simple managedFields bookkeeping: each write records one `Update` entry for its manager with
 * the set of fields the object carries (FieldsV1 shape), replacing that manager's earlier entry.
 * It is not server-side apply's ownership model; it keeps the field visible and well-formed.
 */
import type { KObject, ManagedFieldsEntry } from '../../api/meta.js';

/** Metadata fields the server owns; they never appear in a field set. */
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

function fieldSet(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[`f:${k}`] = v !== null && typeof v === 'object' && !Array.isArray(v) ? fieldSet(v) : {};
  }
  return out;
}

/** The FieldsV1 set of an object, without the type meta and server-owned metadata. */
export function objectFieldSet(obj: KObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (k === 'metadata') {
      const meta: Record<string, unknown> = {};
      for (const [mk, mv] of Object.entries(v as Record<string, unknown>)) {
        if (!SERVER_META.has(mk) && mv !== undefined) meta[`f:${mk}`] = mv !== null && typeof mv === 'object' && !Array.isArray(mv) ? fieldSet(mv) : {};
      }
      if (Object.keys(meta).length > 0) out['f:metadata'] = meta;
      continue;
    }
    out[`f:${k}`] = v !== null && typeof v === 'object' && !Array.isArray(v) ? fieldSet(v) : {};
  }
  return out;
}

/** The manager name: the fieldManager parameter, else the User-Agent up to its first '/'. */
export function managerName(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const ua = (userAgent ?? '').split('/')[0] ?? '';
  return ua === '' ? 'unknown' : ua;
}

/** Replaces the manager's Update entry in `obj.metadata.managedFields` (mutates obj). */
export function recordUpdate(
  obj: KObject,
  entry: { manager: string; apiVersion: string; time: string; subresource?: string },
): void {
  const meta = (obj.metadata ??= {});
  const fields = objectFieldSet(obj);
  const others = (meta.managedFields ?? []).filter(
    (e) => !(e.manager === entry.manager && e.operation === 'Update' && (e.subresource ?? '') === (entry.subresource ?? '')),
  );
  if (Object.keys(fields).length > 0) {
    const e: ManagedFieldsEntry = {
      manager: entry.manager,
      operation: 'Update',
      apiVersion: entry.apiVersion,
      time: entry.time,
      fieldsType: 'FieldsV1',
      fieldsV1: fields,
    };
    if (entry.subresource) e.subresource = entry.subresource;
    others.push(e);
  }
  if (others.length > 0) meta.managedFields = others;
  else delete meta.managedFields;
}
