/**
 * PATCH bodies: one dispatch point from the request's Content-Type to the patch implementation.
 * The result is a new object; the original (possibly a frozen stored object) is never touched.
 */
import type { KObject } from '../../api/meta.js';
import { type ApplyOptions, serverSideApply } from '../apply/index.js';
import { errors } from '../http/errors.js';
import { invalid } from '../http/field-errors.js';
import { applyJsonPatch, jsonPatchOpProblems } from './json-patch.js';
import { patchSchemaFor } from './merge-keys.js';
import { applyMergePatch, decodeObjectPatch } from './merge-patch.js';
import { strategicMergePatch } from './strategic-merge-patch.js';
import { depthSyntaxError, tooDeepAt } from '../validation/depth.js';
import { goJsonKind, isRecord } from '../../lib/json.js';
import { dropNullFields } from '../validation/nulls.js';
import { type StrictJson, duplicateFieldMessage, parseJsonStrict } from '../validation/json-body.js';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** In upstream's order, for the 415 message. */
export const PATCH_TYPES: readonly string[] = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH];

export interface PatchKind {
  group: string;
  version: string;
  kind: string;
}

/** The media type of a Content-Type header, without parameters such as `charset`. */
export function patchMediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/**
 * The cap on a patch result, leaving out managedFields: the server writes those, one level per
 * level of the object plus a few, so an object at the cap carries them a little past it.
 */
function patchResultTooDeep(result: unknown): '{' | '[' | undefined {
  if (!isRecord(result) || !isRecord(result.metadata)) return tooDeepAt(result);
  const { managedFields: _, ...metadata } = result.metadata;
  return tooDeepAt({ ...result, metadata });
}

/**
 * What upstream's strict unmarshal of the patch text reports (fieldValidation Warn or Strict),
 * ahead of the patched object's unknown fields: a merge or strategic merge patch's repeated keys
 * (decoded into a map), a JSON patch's unknown and repeated operation fields, prefixed
 * `json patch`. A patch that does not parse has none: applyPatch words its error.
 */
export function patchTextProblems(patchType: string, text: string): string[] {
  const type = patchMediaType(patchType);
  if (type !== MERGE_PATCH && type !== STRATEGIC_MERGE_PATCH && type !== JSON_PATCH) return [];
  let parsed: StrictJson;
  try {
    parsed = parseJsonStrict(text);
  } catch {
    return [];
  }
  if (type !== JSON_PATCH) return parsed.duplicateFields.map(duplicateFieldMessage);
  return jsonPatchOpProblems(parsed.value, parsed.duplicateFields).map((problem) => `json patch ${problem}`);
}

/**
 * Applies a patch of the given media type. Server-side apply also needs the applier (`apply`);
 * without it an apply patch is refused as an unsupported type.
 */
export function applyPatch(
  patchType: string,
  original: KObject,
  patchBody: Buffer | string,
  kind: PatchKind,
  apply?: ApplyOptions,
): KObject {
  const text = typeof patchBody === 'string' ? patchBody : patchBody.toString('utf8');
  const doc = structuredClone(original) as Record<string, unknown>;
  let result: unknown;
  switch (patchMediaType(patchType)) {
    case JSON_PATCH:
      result = applyJsonPatch(doc, text);
      break;
    case MERGE_PATCH:
      result = applyMergePatch(doc, text);
      break;
    case STRATEGIC_MERGE_PATCH: {
      const patch = decodeObjectPatch(text, '');
      result = patch === null ? doc : strategicMergePatch(doc, patch, patchSchemaFor(kind.group, kind.kind));
      break;
    }
    case APPLY_PATCH:
      if (!apply) throw errors.unsupportedMediaType([...PATCH_TYPES]);
      result = serverSideApply(doc, text, kind, apply);
      break;
    default:
      throw errors.unsupportedMediaType([...PATCH_TYPES]);
  }
  return patchedObject(result, original, kind);
}

/** The patched document as an object of the kind, or upstream's 422 against `patch`. */
function patchedObject(result: unknown, original: KObject, kind: PatchKind): KObject {
  const name = original.metadata?.name ?? '';
  const deep = patchResultTooDeep(result);
  if (deep) {
    // Upstream fails decoding the patched JSON; its value is too deep to print.
    throw errors.invalid(kind.kind, kind.group, name, [
      invalid('patch', '<nested too deep>', `couldn't get version/kind; json parse error: ${depthSyntaxError(deep)}`),
    ]);
  }
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    // Upstream fails decoding the patched JSON into the kind.
    throw errors.invalid(kind.kind, kind.group, name, [
      invalid('patch', JSON.stringify(result), `json: cannot unmarshal ${goJsonKind(result)} into Go value of type ${kind.kind}`),
    ]);
  }
  dropNullFields(result);
  return result as KObject;
}
