/**
 * One traversal of an object against its kind's (inlined) schema, shared by the unknown-field
 * report (`fieldValidation`, apply's "field not declared in schema") and the decoder's type checks:
 * it reports the fields the schema does not declare and every value whose JSON type the Go field
 * it lands in cannot take, with what Go's decoder needs to word the error (the Go type, the
 * innermost struct and the field path). A request body's decode asks for more in the same pass
 * (validation/object-decode.ts): null fields dropped, object keys counted (for the duplicate
 * check), the nesting cap, and the fields at given paths (time fields) collected wherever they
 * are, schema or not.
 *
 * Hot path: every write's body goes through here. The schema is compiled once into nodes (a Map
 * of fields per struct), the walk allocates nothing per field, and paths are only spelled out for
 * what is reported.
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
  /** A field the schema does not declare, at `path` (`.spec.foo`): `parent[key]`. */
  unknown?(path: string, parent: Record<string, unknown>, key: string): void;
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

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
/** ±2^63: past JavaScript's safe integers a parsed int64 is rounded, so the bound is inclusive. */
const INT64_BOUND = 2 ** 63;

const isInt32 = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= INT32_MIN && (v as number) <= INT32_MAX;

/** Whether a JSON value (not null) decodes into a Go field of `kind` (the value only, not its children). */
function fits(kind: GoKind, v: unknown): boolean {
  switch (kind) {
    case 'struct':
    case 'map':
      return typeof v === 'object' && !Array.isArray(v);
    case 'slice':
      return Array.isArray(v);
    case 'bytes':
    case 'string':
    case 'time':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'any':
      return true;
    default:
      return fitsNumber(kind, v);
  }
}

function fitsNumber(kind: GoKind, v: unknown): boolean {
  switch (kind) {
    case 'int32':
      return isInt32(v);
    case 'int64':
      return Number.isInteger(v) && Math.abs(v as number) <= INT64_BOUND;
    case 'float64':
      return typeof v === 'number';
    case 'intOrString':
      return typeof v === 'string' || isInt32(v);
    default:
      return typeof v === 'number' || (typeof v === 'string' && QUANTITY.test(v.trim()));
  }
}

/** A schema compiled for the walk: its kind and, for containers, its children's nodes. */
interface Node {
  readonly kind: GoKind;
  readonly schema: Schema;
  /** A struct's Go name without its package ('' when unnamed): the context of its fields' errors. */
  readonly struct: string;
  /** A struct's declared fields (own keys only: `constructor` is no field of any kind). */
  readonly fields: ReadonlyMap<string, Node> | undefined;
  /** A map's values, or what a struct takes besides its fields (additionalProperties). */
  readonly values: Node | undefined;
  readonly items: Node | undefined;
}

const NODES = new WeakMap<Schema, Node>();
const ANY: Schema = {};

function nodeOf(s: Schema): Node {
  let node = NODES.get(s);
  if (node) return node;
  const kind = goKindOf(s);
  const container = kind === 'struct' || kind === 'map';
  const additional = s.additionalProperties;
  const values = !container || additional === undefined || additional === false ? undefined : nodeOf(isSchema(additional) ? additional : ANY);
  const properties = kind === 'struct' ? Object.entries(s.properties as Record<string, Schema>) : undefined;
  node = {
    kind,
    schema: s,
    struct: kind === 'struct' ? (goTypeName(s) ?? '').replace(/^.*\./, '') : '',
    fields: properties && new Map(properties.map(([k, field]) => [k, nodeOf(field)])),
    values,
    items: kind === 'slice' ? nodeOf(isSchema(s.items) ? s.items : ANY) : undefined,
  };
  NODES.set(s, node);
  return node;
}

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null;

/**
 * Fields collected wherever they sit, whatever the schema says of them: a tree of keys; `mark`
 * ends a path (its value goes to `MarkVisitor.marked`), `list` descends into a list's items,
 * otherwise into an object's keys.
 */
export interface FieldMark<T> {
  readonly mark?: T;
  readonly list?: boolean;
  readonly next?: FieldMarks<T>;
}
export type FieldMarks<T> = ReadonlyMap<string, FieldMark<T>>;

/** What a walk with marks also reports: each marked field present with a value other than null. */
export interface MarkVisitor<T> {
  marks: FieldMarks<T>;
  marked(parent: Record<string, unknown>, key: string, mark: T): void;
}

export interface WalkOptions<T> {
  /** Remove null-valued fields from every object (Go leaves such a field at its zero value, which the API omits). */
  dropNulls?: boolean;
  /** Throw NestingTooDeep at a container nested deeper than this (root = level 1). */
  maxDepth?: number;
  marks?: MarkVisitor<T>;
}

/** A container nested past WalkOptions.maxDepth. */
export class NestingTooDeep extends Error {
  constructor(readonly bracket: '{' | '[') {
    super('nesting too deep');
  }
}

/**
 * The walk's state. Objects and lists it descends into are pushed on `segs` (with the struct whose
 * field each is, if any), so a report can spell its path and Go field context.
 */
class Walk<T> {
  keys = 0;
  private readonly segs: (string | number)[] = [];
  private readonly owners: (string | undefined)[] = [];
  private readonly full: boolean;
  private readonly dropNulls: boolean;
  private readonly maxDepth: number;
  private readonly onMark: ((parent: Record<string, unknown>, key: string, mark: T) => void) | undefined;

  constructor(
    private readonly visitor: SchemaVisitor,
    options: WalkOptions<T>,
  ) {
    this.dropNulls = options.dropNulls === true;
    this.maxDepth = options.maxDepth ?? Infinity;
    // Dropping nulls, counting keys and the cap need every object, not only the schema's.
    this.full = this.dropNulls || options.maxDepth !== undefined;
    this.onMark = options.marks?.marked;
  }

  /** An object's fields; the depth of a container is the number of containers above it, plus one. */
  object(obj: Record<string, unknown>, node: Node | undefined, marks: FieldMarks<T> | undefined): void {
    if (this.segs.length >= this.maxDepth) throw new NestingTooDeep('{');
    const fields = node?.fields;
    for (const k in obj) {
      this.keys++;
      const item = obj[k];
      if (item === null && this.dropNulls) {
        delete obj[k];
        continue;
      }
      const field = fields?.get(k);
      const child = field ?? (node === undefined ? undefined : this.undeclared(node, obj, k));
      if (item === null || item === undefined) continue;
      const mark = marks === undefined ? undefined : this.marked(obj, k, marks);
      this.value(item, k, child, field === undefined ? undefined : node?.struct, mark);
    }
  }

  /** The mark of `obj[key]`, reported when it ends a path. */
  private marked(obj: Record<string, unknown>, key: string, marks: FieldMarks<T>): FieldMark<T> | undefined {
    const mark = marks.get(key);
    if (mark?.mark !== undefined) this.onMark?.(obj, key, mark.mark);
    return mark;
  }

  /** What takes a field `node` does not declare: a map's values, a struct's additionalProperties, or nothing (unknown). */
  private undeclared(node: Node, obj: Record<string, unknown>, key: string): Node | undefined {
    if (node.values === undefined && node.fields !== undefined) this.visitor.unknown?.(this.path(key), obj, key);
    return node.values;
  }

  list(list: unknown[], node: Node | undefined, marks: FieldMarks<T> | undefined): void {
    if (this.segs.length >= this.maxDepth) throw new NestingTooDeep('[');
    const items = node?.items;
    const itemMark: FieldMark<T> | undefined = marks && { next: marks };
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      if (item === null || item === undefined) {
        if (item === null && items !== undefined) this.visitor.nullItem?.(list, i, items.kind);
        continue;
      }
      this.value(item, i, items, undefined, itemMark);
    }
  }

  /** A value (not null) at `key` of the current container, expected to decode as `node`; `owner` is the struct declaring it. */
  private value(item: unknown, key: string | number, node: Node | undefined, owner: string | undefined, mark: FieldMark<T> | undefined): void {
    const child = node === undefined ? undefined : this.checked(item, node, key, owner);
    if (typeof item !== 'object' || (child === undefined && mark?.next === undefined && !this.full)) return;
    this.segs.push(key);
    this.owners.push(owner);
    if (Array.isArray(item)) this.list(item, child, mark?.list === true ? mark.next : undefined);
    else this.object(item as Record<string, unknown>, child, mark?.list === true ? undefined : mark?.next);
    this.segs.pop();
    this.owners.pop();
  }

  /** The node to walk `item` with: none when it does not fit `node` (reported) or is free-form (nothing below is checked). */
  private checked(item: unknown, node: Node, key: string | number, owner: string | undefined): Node | undefined {
    if (!fits(node.kind, item)) {
      this.mismatch(item, node, key, owner);
      return undefined;
    }
    return node.kind === 'any' ? undefined : node;
  }

  /** The JSON path of `key` under the current container, as upstream prints it: `.spec.ports[0].port`. */
  path(key: string | number | undefined): string {
    let out = '';
    for (const seg of this.segs) out += typeof seg === 'number' ? `[${seg}]` : `.${seg}`;
    if (key !== undefined) out += typeof key === 'number' ? `[${key}]` : `.${key}`;
    return out;
  }

  mismatch(value: unknown, node: Node, key: string | number | undefined, owner: string | undefined): void {
    if (!this.visitor.mismatch) return;
    // Go's context: the innermost struct holding the field, and the struct fields down to it.
    let goStruct = owner ?? '';
    const goFields: string[] = [];
    for (let i = 0; i < this.segs.length; i++) {
      const struct = this.owners[i];
      if (struct === undefined) continue;
      goFields.push(String(this.segs[i]));
      if (owner === undefined) goStruct = struct;
    }
    if (owner !== undefined) goFields.push(String(key));
    this.visitor.mismatch({ value, kind: node.kind, goType: goTypeOf(node.schema), goStruct, goField: goFields.join('.'), path: this.path(key) });
  }
}

/**
 * Walks `value` (a whole object) against its kind's inlined schema (none: only what `options`
 * asks for); returns the number of object keys it visited (every key of every object when it
 * drops nulls or caps nesting, nulls included).
 */
export function walkObject<T = never>(value: unknown, schema: Schema | undefined, visitor: SchemaVisitor, options: WalkOptions<T> = {}): number {
  if (value === null || value === undefined) return 0;
  const walk = new Walk<T>(visitor, options);
  let node = schema && nodeOf(schema);
  if (node !== undefined && !fits(node.kind, value)) {
    walk.mismatch(value, node, undefined, undefined);
    node = undefined;
  }
  if (typeof value === 'object') {
    if (Array.isArray(value)) walk.list(value, node, undefined);
    else walk.object(value as Record<string, unknown>, node, options.marks?.marks);
  }
  return walk.keys;
}
