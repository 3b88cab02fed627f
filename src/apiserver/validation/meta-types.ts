/**
 * ObjectMeta field types, checked as Go's decoder checks them when it reads a body into
 * metav1.ObjectMeta: a wrongly typed field is a decoding error (400), never something later code
 * trips over. Null list items decode to their zero value, as Go leaves them.
 */
import { isRecord } from '../../lib/json.js';

const STRINGS = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp'];
const INTEGERS = ['generation', 'deletionGracePeriodSeconds'];
const STRING_MAPS = ['labels', 'annotations'];
const OBJECT_LISTS: Record<string, string> = { ownerReferences: 'v1.OwnerReference', managedFields: 'v1.ManagedFieldsEntry' };

function goKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}

const mismatch = (v: unknown, field: string, type: string): string =>
  `json: cannot unmarshal ${goKind(v)} into Go struct field ObjectMeta.metadata.${field} of type ${type}`;

function listError(meta: Record<string, unknown>, field: string, itemType: string, isItem: (v: unknown) => boolean, zero: () => unknown): string | undefined {
  const v = meta[field];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) return mismatch(v, field, `[]${itemType}`);
  for (let i = 0; i < v.length; i++) {
    if (v[i] === null) v[i] = zero();
    else if (!isItem(v[i])) return mismatch(v[i], field, itemType);
  }
  return undefined;
}

/** Go's decoding error for the first wrongly typed ObjectMeta field, or undefined. */
export function objectMetaTypeError(meta: Record<string, unknown>): string | undefined {
  for (const f of STRINGS) if (meta[f] !== undefined && typeof meta[f] !== 'string') return mismatch(meta[f], f, 'string');
  for (const f of INTEGERS) if (meta[f] !== undefined && !Number.isInteger(meta[f])) return mismatch(meta[f], f, 'int64');
  for (const f of STRING_MAPS) {
    const v = meta[f];
    if (v === undefined) continue;
    if (!isRecord(v)) return mismatch(v, f, 'map[string]string');
    for (const item of Object.values(v)) if (typeof item !== 'string') return mismatch(item, f, 'string');
  }
  const finalizers = listError(meta, 'finalizers', 'string', (x) => typeof x === 'string', () => '');
  if (finalizers) return finalizers;
  for (const [f, type] of Object.entries(OBJECT_LISTS)) {
    const err = listError(meta, f, type, isRecord, () => ({}));
    if (err) return err;
  }
  return undefined;
}
