/**
 * Wrongly typed fields, refused as kube-apiserver's decoders refuse them, from one walk of the
 * kind's OpenAPI schema (openapi/schema-walk.ts). Three decoders meet a mistyped field upstream,
 * each with its own words:
 * - encoding/json (sigs.k8s.io/json) for create and update bodies and the JSON and merge patch
 *   results: `json: cannot unmarshal string into Go struct field ServiceAccount.secrets of type
 *   []v1.ObjectReference`. Plain mismatches are saved and decoding goes on (the first one is
 *   reported); a type with its own unmarshaler (IntOrString, Quantity, Time) stops it at once, so
 *   its error wins.
 * - the unstructured converter for the strategic merge patch result (`cannot restore slice from
 *   string`, `unrecognized type: int32`), which stops at the first.
 * - structured-merge-diff for an apply configuration (`.secrets: expected list, got &{x}`), which
 *   reports them all.
 */
import type { GVK, Schema } from '../openapi/builder.js';
import { schemaFor } from '../openapi/schema-for.js';
import { type GoKind, type Mismatch, QUANTITY, walkObject } from '../openapi/schema-walk.js';
import { goJsonKind } from '../../lib/json.js';

/** resource.ErrFormatWrong: what Quantity's unmarshaler says of anything but a well-formed quantity. */
export const QUANTITY_FORMAT_ERROR = `quantities must match the regular expression '${QUANTITY.source}'`;

/** Go zero values for null list items of scalar and struct types (slices and maps stay nil). */
const ZERO: Partial<Record<GoKind, () => unknown>> = {
  struct: () => ({}),
  string: () => '',
  bytes: () => '',
  int32: () => 0,
  int64: () => 0,
  float64: () => 0,
  bool: () => false,
};

/** Go decodes a null list item of a scalar or struct type to its zero value (a walk's `nullItem`). */
export function zeroNullItem(list: unknown[], index: number, kind: GoKind): void {
  const zero = ZERO[kind];
  if (zero) list[index] = zero();
}

/** Every mismatch in `object`, in document order; null list items become their type's zero value. */
function mismatches(object: unknown, schema: Schema | undefined): Mismatch[] {
  const found: Mismatch[] = [];
  if (!schema) return found;
  walkObject(object, schema, { mismatch: (m) => found.push(m), nullItem: zeroNullItem });
  return found;
}

/** The value part of an UnmarshalTypeError: a number that is no integer of the type is quoted. */
function jsonValue(m: Mismatch, intTarget: boolean): string {
  return intTarget && typeof m.value === 'number' ? `number ${String(m.value)}` : goJsonKind(m.value);
}

/** Types whose own UnmarshalJSON runs: its error ends decoding at once. */
const UNMARSHALERS: ReadonlySet<GoKind> = new Set(['intOrString', 'quantity', 'time']);

/** encoding/json's text for one mismatch, with the struct and field context it adds. */
function jsonMessage(m: Mismatch): string {
  if (m.kind === 'quantity') return QUANTITY_FORMAT_ERROR;
  const intTarget = m.kind === 'int32' || m.kind === 'int64' || m.kind === 'intOrString';
  const type = m.kind === 'intOrString' ? 'int32' : m.kind === 'time' ? 'string' : m.goType;
  const into = m.goStruct ? `Go struct field ${m.goStruct}.${m.goField}` : 'Go value';
  return `json: cannot unmarshal ${jsonValue(m, intTarget)} into ${into} of type ${type}`;
}

/**
 * The Go JSON decoder's error for the mismatches of one object (in document order), or undefined:
 * the first one, unless a type with its own unmarshaler failed later (that one stops decoding).
 */
export function jsonTypeError(found: readonly Mismatch[]): string | undefined {
  const first = found.find((m) => UNMARSHALERS.has(m.kind)) ?? found[0];
  return first ? jsonMessage(first) : undefined;
}

/**
 * The Go decoder's error for the first wrongly typed field of an object decoded into the Go type
 * `schema` describes, or undefined. Null list items become their type's zero value, as Go decodes
 * them. Quantity strings are checked too (they fail in the same decoder).
 */
export function schemaTypeError(object: unknown, schema: Schema | undefined): string | undefined {
  return jsonTypeError(mismatches(object, schema));
}

/** The reflect kind the unstructured converter sees for a JSON value. */
function sourceKind(v: unknown): string {
  if (Array.isArray(v)) return 'slice';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v === 'object' ? 'map' : typeof v === 'boolean' ? 'bool' : 'string';
}

/**
 * The converter between scalars (a mismatch, so never an integer into a number type): int64 to
 * string fails, a fraction does not become an integer, anything else is a type it does not
 * recognize.
 */
function scalarConversion(src: string, dst: GoKind): string {
  if (src === 'int64' && dst === 'string') return 'cannot convert int64 to string';
  if (src === 'float64' && (dst === 'int32' || dst === 'int64')) return `cannot convert float64 to ${dst}`;
  return `unrecognized type: ${dst}`;
}

/** runtime.DefaultUnstructuredConverter's text for one mismatch, or undefined where it converts. */
function unstructuredMessage(m: Mismatch): string | undefined {
  const src = sourceKind(m.value);
  switch (m.kind) {
    case 'struct':
      return `cannot restore struct from: ${src}`;
    case 'map':
      return `cannot restore map from ${src}`;
    case 'slice':
    case 'bytes':
      return `cannot restore slice from ${src}`;
    case 'time':
      return `json: cannot unmarshal ${goJsonKind(m.value)} into Go value of type string`;
    case 'intOrString':
      return `json: cannot unmarshal ${jsonValue(m, true)} into Go value of type int32`;
    case 'quantity':
      return QUANTITY_FORMAT_ERROR;
    case 'any':
      return undefined;
    case 'int32':
    case 'int64':
      // An integer out of the type's range: the converter truncates it silently; stored, it would
      // be a value no client decodes, so it is refused in the JSON decoder's words.
      return src === 'int64' ? jsonMessage(m) : scalarConversion(src, m.kind);
    default:
      return scalarConversion(src, m.kind);
  }
}

/** The unstructured converter's error for the mismatches of a strategic merge patch result, or undefined. */
export function unstructuredTypeError(found: readonly Mismatch[]): string | undefined {
  for (const m of found) {
    const message = unstructuredMessage(m);
    if (message) return message;
  }
  return undefined;
}

/** Go's `%v` of a decoded JSON value (maps print with sorted keys). */
function goPrint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goPrint).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o).sort().map((k) => `${k}:${goPrint(o[k])}`).join(' ')}]`;
  }
  return String(v);
}

/** Go's `%#v` of a decoded JSON value held in an interface{}. */
function goSyntax(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSyntax).join(', ')}}`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[string]interface {}{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${goSyntax(o[k])}`).join(', ')}}`;
  }
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

/** Go's `%T` of a decoded JSON value. */
function goTypeOfValue(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  return typeof v === 'number' ? 'float64' : typeof v === 'boolean' ? 'bool' : 'string';
}

/** structured-merge-diff's validation text for one mismatch, or undefined where it accepts the value. */
function typedMessage(m: Mismatch): string | undefined {
  switch (m.kind) {
    case 'string':
    case 'bytes':
    case 'time':
      return `expected string, got &value.valueUnstructured{Value:${goSyntax(m.value)}}`;
    case 'int32':
    case 'int64':
    case 'float64':
      return typeof m.value === 'number' ? undefined : `expected numeric (int or float), got ${goTypeOfValue(m.value)}`;
    case 'bool':
      return `expected boolean, got &{${goPrint(m.value)}}`;
    case 'struct':
    case 'map':
      return `expected map, got &{${goPrint(m.value)}}`;
    case 'slice':
      return `expected list, got &{${goPrint(m.value)}}`;
    default:
      // IntOrString, Quantity and free-form fields are untyped to structured-merge-diff.
      return undefined;
  }
}

/**
 * What structured-merge-diff reports converting an apply configuration to its typed form: every
 * field the schema does not declare and every mistyped one, `<path>: <problem>`, in walk order.
 */
export function typedPatchErrors(applied: unknown, gvk: GVK): string[] {
  const out: string[] = [];
  const schema = schemaFor(gvk.group, gvk.version, gvk.kind);
  if (!schema) return out;
  walkObject(applied, schema, {
    unknown: (p) => out.push(`${p}: field not declared in schema`),
    mismatch: (m) => {
      const message = typedMessage(m);
      if (message) out.push(`${m.path}: ${message}`);
    },
  });
  return out;
}
