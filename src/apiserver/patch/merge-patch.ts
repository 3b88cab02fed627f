/**
 * JSON Merge Patch (RFC 7386, application/merge-patch+json): objects merge recursively, `null`
 * deletes, anything else (arrays included) replaces. Decoding errors are upstream's 400s.
 */
import { errors } from '../http/errors.js';
import { goJsonSyntaxError } from '../validation/json-syntax.js';
import { depthSyntaxError, tooDeepAt } from '../validation/depth.js';
import { goJsonKind, isRecord } from '../../lib/json.js';

type Obj = Record<string, unknown>;

/**
 * Decodes a patch that must be a JSON object, as `map[string]interface{}` decoding does.
 * `prefix` is `error decoding patch: ` for merge patches and empty for strategic ones.
 * Returns null for a literal `null` body.
 */
export function decodeObjectPatch(text: string, prefix: string): Obj | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`${prefix}${goJsonSyntaxError(text) ?? (e as Error).message}`);
  }
  const deep = tooDeepAt(doc);
  if (deep) throw errors.badRequest(`${prefix}${depthSyntaxError(deep)}`);
  if (doc !== null && !isRecord(doc)) {
    throw errors.badRequest(
      `${prefix}json: cannot unmarshal ${goJsonKind(doc)} into Go value of type map[string]interface {}`,
    );
  }
  return doc;
}

/** RFC 7386 MergePatch(target, patch); modifies and returns `target` when both are objects. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const out: Obj = isRecord(target) ? target : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export function applyMergePatch(doc: unknown, text: string): unknown {
  const patch = decodeObjectPatch(text, 'error decoding patch: ');
  if (patch === null) throw errors.badRequest('Invalid JSON Patch');
  return mergePatch(doc, patch);
}
