/** Self-contained kind schemas (every `$ref` inlined), for validating objects against them. */
import { goTyped, goTypeName, REF_PREFIX, type Schema } from './builder.js';
import { ALL_SCHEMAS, resolveRef, schemaNameFor } from './schemas.js';

/** `io.k8s.api.core.v1.ObjectReference` → `v1.ObjectReference`: Go's package-qualified type name. */
function goNameOfDefinition(name: string): string {
  return name.split('.').slice(-2).join('.');
}

/**
 * A copy of `node` with references inlined. Go type names follow: a node keeps its own, an inlined
 * reference brings its definition's.
 */
function inline(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(inline);
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  let goType = goTypeName(node as Schema);
  const { allOf, ...rest } = node as Schema;
  // `{description, allOf: [{$ref}]}` (a described reference) flattens into the referenced schema.
  if (Array.isArray(allOf) && allOf.length === 1) {
    const target = inline(allOf[0]) as Schema;
    Object.assign(out, target);
    goType ??= goTypeName(target);
  } else if (allOf !== undefined) out.allOf = inline(allOf);
  for (const [k, v] of Object.entries(rest)) {
    if (k === '$ref' && typeof v === 'string') {
      const target = inline(resolveRef(v) ?? {}) as Schema;
      Object.assign(out, target);
      goType ??= goTypeName(target) ?? goNameOfDefinition(v.slice(REF_PREFIX.length));
    } else out[k] = inline(v);
  }
  return goType ? goTyped(goType, out) : out;
}

const INLINED = new Map<string, Schema>();

/** A definition (e.g. `io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions`) inlined, or undefined. */
export function definitionSchema(name: string): Schema | undefined {
  let s = INLINED.get(name);
  if (!s) {
    const definition = ALL_SCHEMAS[name];
    if (!definition) return undefined;
    s = goTyped(goNameOfDefinition(name), inline(definition) as Schema);
    INLINED.set(name, s);
  }
  return s;
}

/**
 * The self-contained JSON schema of a kind (references inlined), or undefined for kinds we do
 * not describe. Used for strict field validation and the decoder's type checks.
 */
export function schemaFor(group: string, version: string, kind: string): Schema | undefined {
  const name = schemaNameFor({ group, version, kind });
  return name ? definitionSchema(name) : undefined;
}
