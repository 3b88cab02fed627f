/**
 * Content negotiation: which encodings a request body may use (JSON, YAML, protobuf) and which
 * representation a response takes (JSON, YAML, Table, PartialObjectMetadata), following
 * upstream's rule that the first acceptable media range in the client's list wins.
 */
import YAML from 'yaml';
import type { KObject } from '../../api/meta.js';
import { type MediaRange, parseAccept } from '../discovery/negotiate.js';
import { errors } from '../http/errors.js';
import { decodeProtobufObject } from '../codec/protobuf.js';
import { normalizeTimeFields } from '../codec/time-fields.js';
import { duplicateFields, nestingError, parseJson, unrecognizedObject } from '../validation/json-body.js';
import { depthSyntaxError, MAX_NESTING_DEPTH, parseYamlCapped, tooDeepAt } from '../validation/depth.js';
import { type DecodeFindings, decodeWalk, removeUnknownFields } from '../validation/object-decode.js';
import { NestingTooDeep } from '../openapi/schema-walk.js';
import { goJsonKind } from '../../lib/json.js';
import { jsonTypeError, unstructuredTypeError } from '../validation/field-types.js';
import { compactJson } from '../../lib/frozen-json.js';
import { BoundedMap } from '../../lib/bounded-map.js';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
export const BODY_MEDIA_TYPES = ['application/json', 'application/yaml', PROTOBUF];

export type OutputKind = 'json' | 'yaml' | 'table' | 'partial';

export interface Output {
  kind: OutputKind;
  /** meta.k8s.io version for Table and PartialObjectMetadata (v1 or v1beta1). */
  metaVersion: string;
  pretty: boolean;
}

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

/** The media type without parameters, lower-cased. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** `application/json;as=Table|PartialObjectMetadata[List];g=meta.k8s.io;v=v1[beta1]`, when served. */
function metaOutput(r: MediaRange, pretty: boolean, allowTable: boolean): Output | undefined {
  const v = r.params.v ?? '';
  if (r.params.g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) return undefined;
  if (r.params.as === 'Table') return allowTable ? { kind: 'table', metaVersion: v, pretty } : undefined;
  if (r.params.as === 'PartialObjectMetadata' || r.params.as === 'PartialObjectMetadataList') return { kind: 'partial', metaVersion: v, pretty };
  return undefined;
}

/** A plain media range: JSON (or any) or YAML. */
function plainOutput(type: string, pretty: boolean): Output | undefined {
  if (type === 'application/json' || type === '*/*' || type === 'application/*') return { kind: 'json', metaVersion: 'v1', pretty };
  if (type === 'application/yaml') return { kind: 'yaml', metaVersion: 'v1', pretty };
  return undefined;
}

/**
 * Picks the response representation from the Accept header; 406 when nothing listed is served.
 * Clients send a handful of Accept values, each request again: the answer to each is remembered
 * (bounded, as the header is the client's to choose), and shared, hence read-only.
 */
export function negotiateOutput(accept: string | undefined, pretty: boolean, allowTable: boolean): Readonly<Output> {
  // One memo per (pretty, allowTable), keyed by the header as it came: no key string per request.
  const memo = negotiated[(pretty ? 2 : 0) + (allowTable ? 1 : 0)]!;
  const key = accept ?? '';
  let out = memo.get(key);
  if (out === undefined) {
    out = Object.freeze(pickOutput(accept, pretty, allowTable));
    memo.set(key, out);
  }
  return out;
}

const negotiated = Array.from({ length: 4 }, () => new BoundedMap<string, Readonly<Output>>(64));

function pickOutput(accept: string | undefined, pretty: boolean, allowTable: boolean): Output {
  const ranges = parseAccept(accept ?? '');
  if (ranges.length === 0) return { kind: 'json', metaVersion: 'v1', pretty };
  for (const r of ranges) {
    if (r.params.q === '0') continue;
    // A range with `as=` asks for that representation only, never plain JSON.
    const out = r.type === 'application/json' && r.params.as !== undefined ? metaOutput(r, pretty, allowTable) : plainOutput(r.type, pretty);
    if (out) return out;
  }
  throw errors.notAcceptable(['application/json', 'application/yaml']);
}

/** Serializes a response value for a JSON or YAML output. */
export function encode(value: unknown, out: Output): { contentType: string; body: string } {
  if (out.kind === 'yaml') return { contentType: 'application/yaml', body: YAML.stringify(value) };
  const body = out.pretty ? `${JSON.stringify(value, null, 2)}\n` : `${compactJson(value)}\n`;
  return { contentType: 'application/json', body };
}

export interface DecodedBody {
  object: KObject;
  duplicateFields: string[];
  /** Fields the kind's schema does not declare, already removed from `object` (when asked for). */
  unknownFields: string[];
}

export interface DecodeOptions {
  /** Report and remove the fields the kind's schema does not declare (fieldValidation). */
  unknownFields?: boolean;
}

function cannotHandle(gvk: Gvk, why: string): Error {
  return errors.badRequest(`${gvk.kind} in version "${gvk.version}" cannot be handled as a ${gvk.kind}: ${why}`);
}

/** A YAML or protobuf body parsed (nesting capped). */
function parseBody(type: string, body: Buffer, gvk: Gvk): unknown {
  if (type === 'application/yaml') {
    try {
      return parseYamlCapped(body.toString('utf8'));
    } catch (e) {
      throw cannotHandle(gvk, `error converting YAML to JSON: ${(e as Error).message.split('\n')[0] ?? ''}`);
    }
  }
  if (type === PROTOBUF) {
    const value = decodeProtobufObject(body, gvk);
    const deep = tooDeepAt(value);
    if (deep) throw cannotHandle(gvk, depthSyntaxError(deep));
    return value;
  }
  throw errors.unsupportedMediaType(BODY_MEDIA_TYPES);
}

/**
 * Decodes a create/update body and checks it addresses the endpoint's kind and version. One walk
 * of the parsed body does the decoder's work (validation/object-decode.ts); its findings are
 * reported in the order Go's decoder meets them.
 */
export function decodeObject(contentType: string | undefined, body: Buffer, gvk: Gvk, options: DecodeOptions = {}): DecodedBody {
  const type = mediaType(contentType) || 'application/json';
  const text = type === 'application/json' ? body.toString('utf8') : undefined;
  const object = objectOf(text === undefined ? parseBody(type, body, gvk) : parseJson(text, { kind: gvk.kind }), text, gvk);
  const found = walkBody(object, gvk, text, type !== PROTOBUF, options);
  const duplicates = text === undefined ? [] : duplicateFields(text, found.keys);
  const sniff = typeMetaTypeError(object);
  if (sniff) throw unrecognizedObject(gvk.kind, sniff, text ?? body.toString('utf8'));
  checkTypeMeta(object, gvk);
  // Time fields first: their unmarshaler's error ends Go's decoding, ahead of any saved type error.
  let typeError: string | undefined;
  try {
    normalizeTimeFields(found.times);
    typeError = jsonTypeError(found.mismatches);
  } catch (e) {
    typeError = (e as Error).message;
  }
  if (typeError) throw cannotHandle(gvk, typeError);
  removeUnknownFields(found);
  return { object, duplicateFields: duplicates, unknownFields: found.unknownFields };
}

/** The parsed body as an object, or the decoder's error (nesting past the cap first). */
function objectOf(value: unknown, text: string | undefined, gvk: Gvk): KObject {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as KObject;
  if (text !== undefined && tooDeepAt(value)) throw nestingError(text, { kind: gvk.kind });
  throw cannotHandle(gvk, `json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go value of type struct`);
}

/** The body's one walk; JSON text (`text`) is capped here, YAML and protobuf as they were parsed. */
function walkBody(object: KObject, gvk: Gvk, text: string | undefined, typed: boolean, options: DecodeOptions): DecodeFindings {
  try {
    return decodeWalk(object, gvk, { typed, unknownFields: options.unknownFields, dropNulls: true, maxDepth: text === undefined ? undefined : MAX_NESTING_DEPTH });
  } catch (e) {
    if (e instanceof NestingTooDeep && text !== undefined) throw nestingError(text, { kind: gvk.kind });
    throw e;
  }
}

const STRATEGIC = 'application/strategic-merge-patch+json';

/**
 * checkTypeMeta for a patch result, which is decoded as a body is (time fields parsed, field types
 * checked); a failure is upstream's invalid patch (422 `patch: Invalid value: <patched object>:
 * <error>`). A strategic merge patch result goes through the unstructured converter upstream,
 * not the JSON decoder, hence its own wording of a type error.
 */
export function checkPatchedObject(object: KObject, gvk: Gvk, patchType: string, options: DecodeOptions = {}): DecodeFindings {
  const sniff = typeMetaTypeError(object);
  if (sniff !== undefined) throw invalidPatch(object, sniff);
  checkTypeMeta(object, gvk);
  // The one walk also finds the unknown fields (left in place: the caller reports, then removes them).
  const found = decodeWalk(object, gvk, { typed: true, unknownFields: options.unknownFields });
  const detail = patchedTypeError(found, mediaType(patchType) === STRATEGIC);
  if (detail !== undefined) throw invalidPatch(object, detail);
  return found;
}

/**
 * Upstream's 422 for a patch result its decoder refused: `patch: Invalid value: <patched object>:
 * <error>`, with neither kind nor name.
 */
export function invalidPatch(object: KObject, detail: string): Error {
  return errors.invalid('', '', '', [{ type: 'FieldValueInvalid', field: 'patch', value: JSON.stringify(object), detail }]);
}

/** Time fields parsed and field types checked, as the decoder that reads this patch result would. */
function patchedTypeError(found: DecodeFindings, strategic: boolean): string | undefined {
  try {
    if (strategic) {
      // The converter meets a non-string time as any other mistyped field, then parses the times.
      const converterError = unstructuredTypeError(found.mismatches);
      if (converterError) return converterError;
      normalizeTimeFields(found.times);
      return undefined;
    }
    // The JSON decoder's time unmarshaler error wins over the type errors it saved.
    normalizeTimeFields(found.times);
    return jsonTypeError(found.mismatches);
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * What the version/kind sniff (SimpleMetaFactory.Interpret, which reads only those two fields into
 * strings) says of a non-string apiVersion or kind, before any typed decoding.
 */
function typeMetaTypeError(object: KObject): string | undefined {
  for (const field of ['apiVersion', 'kind'] as const) {
    const v: unknown = object[field];
    if (v !== undefined && typeof v !== 'string') {
      return `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonKind(v)} into Go struct field .${field} of type string`;
    }
  }
  return undefined;
}

/** Defaults missing apiVersion/kind from the endpoint; a different one is a 400. */
export function checkTypeMeta(object: KObject, gvk: Gvk): void {
  const expected = gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`;
  if (object.apiVersion !== undefined && object.apiVersion !== '' && object.apiVersion !== expected) {
    throw errors.badRequest(
      `the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${expected})`,
    );
  }
  if (object.kind !== undefined && object.kind !== '' && object.kind !== gvk.kind) {
    const kind = String(object.kind);
    const coreOrGroup = gvk.group === '' ? 'core' : gvk.group;
    throw errors.badRequest(
      `${kind} in version "${gvk.version}" cannot be handled as a ${gvk.kind}: converting (${gvk.version}.${kind}) to (${coreOrGroup}.${gvk.kind}): unknown conversion`,
    );
  }
  object.apiVersion = expected;
  object.kind = gvk.kind;
}
