/**
 * One traversal of an object against its kind's (inlined) schema, shared by the unknown-field
 * report (`fieldValidation`, apply's "field not declared in schema") and the decoder's type checks:
 * it reports the fields the schema does not declare and every value whose JSON type the Go field
 * it lands in cannot take, with what Go's decoder needs to word the error (the Go type, the
 * innermost struct and the field path). Runs after the nesting cap (validation/depth.ts), so the
 * recursion is bounded.
 */
import { goTypeName, type Schema } from './builder.js';

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';

/** How a field decodes in Go: its reflect kind, or a type with its own JSON unmarshaler. */
export type GoKind =
  | 'struct'
  | 'map'
  | 'slice'
  | 'bytes'
  | 'string'
  | 'int32'
  | 'int64'
  | 'float64'
  | 'bool'
  | 'time'
  | 'intOrString'
  | 'quantity'
  | 'any';

export interface Mismatch {
  /** The JSON value found. */
  value: unknown;
  kind: GoKind;
  /** The Go type of the field, e.g. `[]v1.ObjectReference`. */
  goType: string;
  /** The innermost Go struct holding the field (its name without package); '' at the root. */
  goStruct: string;
  /** Go's field stack: the struct fields from the root, dotted, without list indices or map keys. */
  goField: string;
  /** The JSON path as upstream prints unknown fields: `.spec.ports[0].port`. */
  path: string;
}

export interface SchemaVisitor {
  unknown?(path: string): void;
  mismatch?(m: Mismatch): void;
  /**
   * A `null` list item, which Go decodes to the zero value of the item type; the visitor may
   * replace it (`list[index] = zero`).
   */
  nullItem?(list: unknown[], index: number, kind: GoKind): void;
}

const SPECIAL: Readonly<Record<string, GoKind>> = {
  'v1.Time': 'time',
  'v1.MicroTime': 'time',
  'resource.Quantity': 'quantity',
  'intstr.IntOrString': 'intOrString',
  'runtime.RawExtension': 'any',
  'v1.FieldsV1': 'any',
};

export function goKindOf(s: Schema): GoKind {
  const special = SPECIAL[goTypeName(s) ?? ''];
  if (special) return special;
  if (s[PRESERVE] === true) return 'any';
  switch (s.type) {
    case 'string':
      if (s.format === 'int-or-string') return 'intOrString';
      return s.format === 'byte' ? 'bytes' : 'string';
    case 'integer':
      return s.format === 'int32' ? 'int32' : 'int64';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'array':
      return 'slice';
    case 'object':
      if (s.properties) return 'struct';
      return s.additionalProperties ? 'map' : 'any';
    default:
      return 'any';
  }
}

/** Go's name for the type a schema decodes into. */
export function goTypeOf(s: Schema): string {
  const named = goTypeName(s);
  if (named) return named;
  const kind = goKindOf(s);
  switch (kind) {
    case 'bytes':
      return '[]uint8';
    case 'slice':
      return `[]${goTypeOf((s.items ?? {}) as Schema)}`;
    case 'map':
      return `map[string]${goTypeOf(s.additionalProperties as Schema)}`;
    case 'any':
    case 'struct':
      return 'interface {}';
    default:
      return kind;
  }
}

/** resource.Quantity's accepted form (its regexp in k8s.io/apimachinery). */
export const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
/** ±2^63: past JavaScript's safe integers a parsed int64 is rounded, so the bound is inclusive. */
const INT64_BOUND = 2 ** 63;

const isString = (v: unknown): boolean => typeof v === 'string';
const isInt32 = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= INT32_MIN && (v as number) <= INT32_MAX;

/** Whether a non-null JSON value decodes into a Go field of each kind (the value only, not its children). */
const FITS: Readonly<Record<GoKind, (v: unknown) => boolean>> = {
  struct: isObject,
  map: isObject,
  slice: Array.isArray,
  bytes: isString,
  string: isString,
  time: isString,
  int32: isInt32,
  int64: (v) => Number.isInteger(v) && Math.abs(v as number) <= INT64_BOUND,
  float64: (v) => typeof v === 'number',
  bool: (v) => typeof v === 'boolean',
  intOrString: (v) => typeof v === 'string' || isInt32(v),
  quantity: (v) => typeof v === 'number' || (typeof v === 'string' && QUANTITY.test(v.trim())),
  any: () => true,
};

interface At {
  path: string;
  goStruct: string;
  goField: string;
}

function walk(v: unknown, s: Schema, at: At, visitor: SchemaVisitor): void {
  if (v === null || v === undefined) return;
  const kind = goKindOf(s);
  if (!FITS[kind](v)) {
    visitor.mismatch?.({ value: v, kind, goType: goTypeOf(s), ...at });
    return;
  }
  if (kind === 'struct') walkStruct(v as Record<string, unknown>, s, at, visitor);
  else if (kind === 'map') {
    const values = s.additionalProperties as Schema;
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) walk(item, values, { ...at, path: `${at.path}.${k}` }, visitor);
  } else if (kind === 'slice') {
    const items = (s.items ?? {}) as Schema;
    const list = v as unknown[];
    for (let i = 0; i < list.length; i++) {
      if (list[i] === null) visitor.nullItem?.(list, i, goKindOf(items));
      else walk(list[i], items, { ...at, path: `${at.path}[${i}]` }, visitor);
    }
  }
}

function walkStruct(v: Record<string, unknown>, s: Schema, at: At, visitor: SchemaVisitor): void {
  const props = s.properties as Record<string, Schema>;
  const additional = s.additionalProperties as Schema | undefined;
  const goStruct = (goTypeName(s) ?? '').replace(/^.*\./, '');
  for (const [k, item] of Object.entries(v)) {
    const path = `${at.path}.${k}`;
    const field = props[k];
    if (field) walk(item, field, { path, goStruct, goField: at.goField ? `${at.goField}.${k}` : k }, visitor);
    else if (additional) walk(item, additional, { ...at, path }, visitor);
    else visitor.unknown?.(path);
  }
}

/** Walks `value` (a whole object) against its kind's inlined schema. */
export function walkObject(value: unknown, schema: Schema, visitor: SchemaVisitor): void {
  walk(value, schema, { path: '', goStruct: '', goField: '' }, visitor);
}
