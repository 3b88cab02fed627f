/**
 * What kube-apiserver's decoder does to an object of a kind, in one walk of the object against
 * the kind's schema (openapi/schema-walk.ts): null fields dropped (a body), object keys counted
 * (for the duplicate check of JSON text), the nesting cap, wrongly typed fields and null list
 * items (field-types.ts), unknown fields, and the time fields found for their normalisation
 * (codec/time-fields.ts). The callers decide the order the errors are reported in, as Go's
 * decoder meets them.
 */
import type { GVK, Schema } from '../openapi/builder.js';
import { schemaFor } from '../openapi/schema-for.js';
import { type FieldMarks, type Mismatch, type SchemaVisitor, walkObject } from '../openapi/schema-walk.js';
import { type TimeHit, type TimeMark, timeMarks } from '../codec/time-fields.js';
import { zeroNullItem } from './field-types.js';

export interface DecodeWalkOptions {
  /** Check field types and zero null list items (not for protobuf, typed by its wire format). */
  typed: boolean;
  /** Report the fields the kind's schema does not declare (removeUnknownFields removes them). */
  unknownFields?: boolean;
  /** A request body: null fields are absent. */
  dropNulls?: boolean;
  /** Cap nesting (throws NestingTooDeep): JSON text, not capped while parsed. */
  maxDepth?: number;
}

export interface DecodeFindings {
  /** Object keys in the tree before anything was removed (counted when nulls are dropped or nesting capped). */
  keys: number;
  /** Wrongly typed fields, in document order. */
  mismatches: Mismatch[];
  /** Unknown fields as the decoders name them (`spec.foo`, `spec.containers[0].bar`), in document order. */
  unknownFields: string[];
  /** Where each unknown field is, for removeUnknownFields. */
  unknownAt: [parent: Record<string, unknown>, key: string][];
  /** The time fields present, for codec/time-fields.ts `normalizeTimeFields`. */
  times: TimeHit[];
}

/** What the walk needs of a kind: its schema (none for kinds we do not describe) and its time fields. */
interface KindDecode {
  schema: Schema | undefined;
  marks: FieldMarks<TimeMark>;
}

/** By group, version and kind (the served ones: the registry's, never the client's words), so no key is built per request. */
const KINDS = new Map<string, Map<string, Map<string, KindDecode>>>();

function kindDecode(gvk: GVK): KindDecode {
  let versions = KINDS.get(gvk.group);
  if (!versions) KINDS.set(gvk.group, (versions = new Map()));
  let kinds = versions.get(gvk.version);
  if (!kinds) versions.set(gvk.version, (kinds = new Map()));
  let kind = kinds.get(gvk.kind);
  if (!kind) kinds.set(gvk.kind, (kind = { schema: schemaFor(gvk.group, gvk.version, gvk.kind), marks: timeMarks(gvk) }));
  return kind;
}

/** Walks `object`, a decoded object of kind `gvk`, once; see DecodeWalkOptions for what it changes in place. */
export function decodeWalk(object: Record<string, unknown>, gvk: GVK, options: DecodeWalkOptions): DecodeFindings {
  const found: DecodeFindings = { keys: 0, mismatches: [], unknownFields: [], unknownAt: [], times: [] };
  const visitor: SchemaVisitor = {};
  if (options.typed) {
    visitor.mismatch = (m) => found.mismatches.push(m);
    visitor.nullItem = zeroNullItem;
  }
  if (options.unknownFields) {
    visitor.unknown = (path, parent, key) => {
      // The walk spells `.spec.foo`; decoders name fields without the leading dot.
      found.unknownFields.push(path.slice(1));
      found.unknownAt.push([parent, key]);
    };
  }
  const { schema, marks } = kindDecode(gvk);
  found.keys = walkObject<TimeMark>(object, schema, visitor, {
    dropNulls: options.dropNulls,
    maxDepth: options.maxDepth,
    marks: { marks, marked: (parent, key, mark) => found.times.push({ parent, key, mark }) },
  });
  return found;
}

/**
 * Removes the unknown fields a walk found, once the decode is done with the object (Go's decoder
 * never stores them; fieldValidation only decides whether the client hears of them).
 */
export function removeUnknownFields(found: DecodeFindings): void {
  for (const [parent, key] of found.unknownAt) delete parent[key];
}
