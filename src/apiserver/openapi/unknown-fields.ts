/**
 * Unknown-field detection for `fieldValidation=Strict|Warn`: the paths of fields an object carries
 * that its kind's schema does not declare, in the form upstream reports them (`.spec.foo`,
 * `.spec.containers[0].bar`). Free-form parts of a schema accept anything.
 */
import type { Schema } from './builder.js';
import { schemaFor } from './schema-for.js';

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';

function walk(value: unknown, schema: Schema | undefined, path: string, out: string[]): void {
  if (!schema || schema[PRESERVE] === true || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    const items = schema.items as Schema | undefined;
    value.forEach((v, i) => walk(v, items, `${path}[${i}]`, out));
    return;
  }
  const props = schema.properties as Record<string, Schema> | undefined;
  const additional = schema.additionalProperties as Schema | undefined;
  for (const [k, v] of Object.entries(value)) {
    const child = props?.[k] ?? additional;
    if (child) walk(v, child, `${path}.${k}`, out);
    else if (props) out.push(`${path}.${k}`);
  }
}

/**
 * Paths of the fields of `obj` unknown to the schema of group/version/kind; empty when all are
 * known or when we have no schema for the kind.
 */
export function unknownFields(obj: unknown, group: string, version: string, kind: string): string[] {
  const out: string[] = [];
  walk(obj, schemaFor(group, version, kind), '', out);
  return out;
}
