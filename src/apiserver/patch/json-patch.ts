/**
 * JSON Patch (RFC 6902, application/json-patch+json) as kube-apiserver applies it: the patch is
 * decoded strictly (400 `error decoding patch: ...`), capped at 10000 operations (413), and any
 * operation that cannot apply (missing path, failed `test`, unknown op) is the generic 422.
 * Accumulated `copy` growth is capped as upstream caps it (CVE-2019-1002100).
 */
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { errors } from '../http/errors.js';
import { goJsonSyntaxError } from '../validation/json-syntax.js';
import { duplicateFieldMessage } from '../validation/json-body.js';
import { depthSyntaxError, tooDeepAt } from '../validation/depth.js';
import { patchRejected } from './patch-errors.js';
import { goJsonKind } from '../../lib/json.js';

export const MAX_JSON_PATCH_OPERATIONS = 10000;
/** Upstream's JSONPatchMaxCopyBytes: the body limit, so copies cannot multiply a small body. */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

const OP_TYPE = 'handlers.jsonPatchOp';
const STRING_FIELDS = ['op', 'path', 'from'] as const;

/** Decodes a JSON Patch document the way `[]jsonPatchOp` strict decoding would accept it. */
export function decodeJsonPatch(text: string): unknown[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`error decoding patch: ${goJsonSyntaxError(text) ?? (e as Error).message}`);
  }
  const deep = tooDeepAt(doc);
  if (deep) throw errors.badRequest(`error decoding patch: ${depthSyntaxError(deep)}`);
  if (doc === null) return [];
  if (!Array.isArray(doc)) {
    throw errors.badRequest(`error decoding patch: json: cannot unmarshal ${goJsonKind(doc)} into Go value of type []${OP_TYPE}`);
  }
  for (const op of doc) {
    if (op === null) continue;
    if (typeof op !== 'object' || Array.isArray(op)) {
      throw errors.badRequest(`error decoding patch: json: cannot unmarshal ${goJsonKind(op)} into Go value of type ${OP_TYPE}`);
    }
    for (const f of STRING_FIELDS) {
      const v = (op as Record<string, unknown>)[f];
      if (v !== undefined && v !== null && typeof v !== 'string') {
        throw errors.badRequest(
          `error decoding patch: json: cannot unmarshal ${goJsonKind(v)} into Go struct field jsonPatchOp.${f} of type string`,
        );
      }
    }
  }
  return doc;
}

const OP_FIELDS: readonly string[] = [...STRING_FIELDS, 'value'];

/**
 * What strict decoding into `[]jsonPatchOp` reports of a parsed JSON patch (fieldValidation Warn
 * or Strict): per operation, the fields jsonPatchOp does not have, then the operation's repeated
 * keys (`duplicates`, paths such as `[1].path` or `[0].value.k`), without upstream's `json patch `
 * prefix.
 */
export function jsonPatchOpProblems(ops: unknown, duplicates: readonly string[]): string[] {
  if (!Array.isArray(ops)) return [];
  const problems: string[] = [];
  let next = 0;
  ops.forEach((op: unknown, i) => {
    if (op !== null && typeof op === 'object' && !Array.isArray(op)) {
      for (const key of Object.keys(op)) if (!OP_FIELDS.includes(key)) problems.push(`unknown field "[${i}].${key}"`);
    }
    // The duplicates come in document order, so an operation's are the next ones with its index.
    while (next < duplicates.length && duplicates[next]?.startsWith(`[${i}]`)) problems.push(duplicateFieldMessage(duplicates[next++] ?? ''));
  });
  return problems;
}

/** Applies a JSON Patch document to `doc` (which it may modify) and returns the result. */
export function applyJsonPatch(doc: unknown, text: string): unknown {
  const ops = decodeJsonPatch(text);
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw errors.tooLarge(
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`,
    );
  }
  let result = doc;
  let copied = 0;
  ops.forEach((raw, i) => {
    if (raw === null) throw patchRejected();
    const op = raw as Operation;
    if (op.op === 'copy') {
      let size: number;
      try {
        size = JSON.stringify(fastJsonPatch.getValueByPointer(result, op.from) ?? null).length;
      } catch {
        throw patchRejected();
      }
      copied += size;
      if (copied > MAX_JSON_PATCH_COPY_BYTES) throw patchRejected();
    }
    try {
      result = fastJsonPatch.applyOperation(result, op, true, true, true, i).newDocument;
    } catch {
      throw patchRejected();
    }
  });
  return result;
}
