/**
 * The `data`/`binaryData` rules Secrets and ConfigMaps share: config-key names, base64 values
 * (a decoding error is a 400, as upstream's JSON decoder reports it), size limit and `immutable`.
 */
import type { KObject } from '../../../api/meta.js';
import { errors } from '../../http/errors.js';
import { type FieldError, forbidden, invalid } from '../../http/field-errors.js';
import { isConfigMapKey } from '../../validation/names.js';

const IMMUTABLE = 'field is immutable when `immutable` is set';

/** Throws 400 unless every value is canonical base64 (Go's StdEncoding). */
export function checkBase64(obj: KObject, field: string): void {
  const data = obj[field];
  if (data === undefined || data === null) return;
  const kind = String(obj.kind);
  const fail = (why: string): never => {
    throw errors.badRequest(`${kind} in version "v1" cannot be handled as a ${kind}: ${why}`);
  };
  if (typeof data !== 'object' || Array.isArray(data)) fail(`json: cannot unmarshal into Go struct field ${kind}.${field} of type map[string][]uint8`);
  for (const value of Object.values(data as Record<string, unknown>)) {
    if (typeof value !== 'string') fail(`json: cannot unmarshal into Go struct field ${kind}.${field} of type []uint8`);
    const text = value as string;
    const bad = /[^A-Za-z0-9+/=]/.exec(text);
    if (bad) fail(`illegal base64 data at input byte ${bad.index}`);
    if (text.length % 4 !== 0 || /=[^=]/.test(text)) fail(`illegal base64 data at input byte ${Math.max(0, text.length - (text.length % 4 || 4))}`);
  }
}

export function validateKeys(data: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!data || typeof data !== 'object') return errs;
  for (const key of Object.keys(data)) {
    for (const msg of isConfigMapKey(key)) errs.push(invalid(`${field}[${key}]`, key, msg));
  }
  return errs;
}

/** `immutable: true` freezes the data fields and itself. */
export function validateImmutable(obj: KObject, old: KObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) errs.push(forbidden('immutable', IMMUTABLE));
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) errs.push(forbidden(f, IMMUTABLE));
  }
  return errs;
}
