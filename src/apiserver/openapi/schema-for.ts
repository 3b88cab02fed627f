/** Self-contained kind schemas (every `$ref` inlined), for validating objects against them. */
import type { Schema } from './builder.js';
import { ALL_SCHEMAS, resolveRef, schemaNameFor } from './schemas.js';

function inline(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(inline);
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  const { allOf, ...rest } = node as Schema;
  // `{description, allOf: [{$ref}]}` (a described reference) flattens into the referenced schema.
  if (Array.isArray(allOf) && allOf.length === 1) Object.assign(out, inline(allOf[0]));
  else if (allOf !== undefined) out.allOf = inline(allOf);
  for (const [k, v] of Object.entries(rest)) {
    if (k === '$ref' && typeof v === 'string') Object.assign(out, inline(resolveRef(v) ?? {}));
    else out[k] = inline(v);
  }
  return out;
}

const INLINED = new Map<string, Schema>();

/**
 * The self-contained JSON schema of a kind (references inlined), or undefined for kinds we do
 * not describe. Used for strict field validation.
 */
export function schemaFor(group: string, version: string, kind: string): Schema | undefined {
  const name = schemaNameFor({ group, version, kind });
  if (!name) return undefined;
  let s = INLINED.get(name);
  if (!s) {
    s = inline(ALL_SCHEMAS[name]) as Schema;
    INLINED.set(name, s);
  }
  return s;
}
