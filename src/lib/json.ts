/**
 * Readers for untyped JSON (objects as they arrive on the wire or sit in the store), so strategies
 * and printers can walk optional fields without a cast at every step.
 */

/** An object field as a record; anything else (absent, null, array, scalar) reads as empty. */
export function record(v: unknown): Record<string, unknown> {
  return isRecord(v) ? v : {};
}

/** A list field; anything else reads as empty. */
export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** A list of objects (items that are not objects read as empty records). */
export function records(v: unknown): Record<string, unknown>[] {
  return list(v).map(record);
}

/** A string field or undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The strings of a list field (other items and non-lists are left out). */
export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** A scalar as printed text: strings as they are, null/absent as '', numbers and booleans via String. */
export function text(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

/** A JSON object (not null, not an array). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Freezes a JSON value and everything reachable from it, so it can be shared read-only; returns it. */
export function deepFreeze<T>(value: T): Readonly<T> {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (typeof value[i] === 'object') deepFreeze(value[i]);
    return value;
  }
  const obj = value as Record<string, unknown>;
  // for-in, not Object.values, and only objects visited: no array per object, no call per scalar
  // (0.63-0.67 of the CPU on a cached CSR; every watch event the controller caches pays it).
  for (const k in obj) if (typeof obj[k] === 'object' && Object.hasOwn(obj, k)) deepFreeze(obj[k]);
  return value;
}

/**
 * Freezes `value` in place, as deepFreeze does, and tells whether it is plain JSON: a value equal
 * to `JSON.parse(JSON.stringify(value))`, made only of plain objects, arrays without holes, strings,
 * booleans, null and finite numbers other than -0. False stops at the first other value (an
 * undefined field, a Date, NaN...), leaving `value` partly frozen.
 */
export function freezePlainJson(value: unknown): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (Array.isArray(value)) {
    Object.freeze(value);
    for (let i = 0; i < value.length; i++) if (value[i] === undefined || !freezePlainJson(value[i])) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  Object.freeze(value);
  const record = value as Record<string, unknown>;
  // for-in, not Object.values: no array per object. The prototype is Object.prototype, whose own keys are not enumerable.
  for (const key in record) if (!freezePlainJson(record[key])) return false;
  return true;
}

/** encoding/json's name for a JSON value's type, as its UnmarshalTypeError prints it. */
export function goJsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}
