/**
 * Unknown-field detection for `fieldValidation=Strict|Warn`: the paths of fields an object carries
 * that its kind's schema does not declare, in the form upstream reports them (`.spec.foo`,
 * `.spec.containers[0].bar`). Free-form parts of a schema accept anything.
 */
import { schemaFor } from './schema-for.js';
import { walkObject } from './schema-walk.js';

/**
 * Paths of the fields of `obj` unknown to the schema of group/version/kind; empty when all are
 * known or when we have no schema for the kind.
 */
export function unknownFields(obj: unknown, group: string, version: string, kind: string): string[] {
  const schema = schemaFor(group, version, kind);
  const out: string[] = [];
  if (schema) walkObject(obj, schema, { unknown: (path) => out.push(path) });
  return out;
}
