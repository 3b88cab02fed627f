/**
 * Server-side apply (`application/apply-patch+yaml`): the applier's configuration is merged into
 * the live object by the kind's schema, the applier's `Apply` entry becomes exactly the fields it
 * applied, fields it applied before and dropped now are removed unless someone else owns them,
 * and changing a field another manager owns is a conflict unless forced (or, for `kubectl`,
 * unless the field is still as its client-side last-applied configuration set it).
 */
import { parseYamlCapped } from '../validation/depth.js';
import type { KObject, ManagedFieldsEntry, StatusCause } from '../../api/meta.js';
import { ApiError, errors } from '../http/errors.js';
import type { Schema } from '../openapi/builder.js';
import { schemaFor } from '../openapi/schema-for.js';
import { typedPatchErrors } from '../validation/field-types.js';
import { timestampSeconds } from '../../lib/rfc3339.js';
import { FieldSet, pathString } from './field-set.js';
import { allowedFromLastApplied, KUBECTL_MANAGER, syncLastApplied } from './last-applied.js';
import { type Manager, decodeManagers, encodeManagers, objectFieldSet, printManager, putManager, sameManager } from './managers.js';
import { compareObjects, type Gvk } from './update.js';
import { isRecord } from '../../lib/json.js';
import { mergeValue, removeAt } from './typed.js';

export interface ApplyOptions {
  /** The fieldManager query parameter (validated as present by the handler). */
  manager: string;
  force: boolean;
  now: Date;
  subresource?: string;
}

const apiVersionOf = (gvk: Gvk): string => (gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`);

/** Decodes the YAML (or JSON, which is YAML) body into the applied configuration. */
function decodeApplied(text: string, gvk: Gvk): KObject {
  let doc: unknown;
  try {
    doc = parseYamlCapped(text);
  } catch (e) {
    throw errors.badRequest(`error decoding YAML: ${(e as Error).message.split('\n')[0] ?? ''}`);
  }
  if (!isRecord(doc)) throw errors.badRequest('error decoding YAML: the apply configuration must be an object');
  const applied = doc as KObject;
  const expected = apiVersionOf(gvk);
  if (applied.apiVersion !== expected) {
    throw errors.badRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${applied.apiVersion ?? ''}, expected: ${expected}`,
    );
  }
  if (applied.metadata?.managedFields !== undefined) throw errors.badRequest('metadata.managedFields must be nil');
  return applied;
}

/**
 * Upstream's `failed to create typed patch object` for fields the schema does not declare or
 * values of the wrong type (a 500 upstream, a 400 here: docs/compatibility.md).
 */
function checkDeclared(applied: KObject, gvk: Gvk): void {
  const texts = typedPatchErrors(applied, gvk);
  if (texts.length === 0) return;
  const meta = applied.metadata ?? {};
  const what = `${meta.namespace ?? ''}/${meta.name ?? ''}; ${gvk.group}/${gvk.version}, Kind=${gvk.kind}`;
  const body = texts.length === 1 ? texts[0] : `errors:\n  ${texts.join('\n  ')}`;
  throw errors.badRequest(`failed to create typed patch object (${what}): ${body}`);
}

interface Conflict {
  manager: ManagedFieldsEntry;
  path: string[];
}

/** The 409 upstream answers for apply conflicts: causes per field, message grouped by manager. */
export function conflictError(conflicts: Conflict[]): ApiError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  let message: string;
  const [only] = conflicts;
  if (conflicts.length === 1 && only) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(only.manager)}: ${pathString(only.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const name = printManager(c.manager);
      byManager.set(name, [...(byManager.get(name) ?? []), pathString(c.path)]);
    }
    const lines: string[] = [];
    for (const name of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${name}:`, ...(byManager.get(name) ?? []).map((p) => `- ${p}`));
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}

/** Whether any of the managers owns the path or something below it. */
function ownedByAny(managers: readonly Manager[], path: readonly string[]): boolean {
  return managers.some((m) => m.set.at(path) !== undefined);
}

/**
 * Fields the apply changes that other managers own. `kubectl` may take over, without conflict,
 * fields its client-side apply set (upstream's bridge from client- to server-side apply).
 */
function findConflicts(
  others: readonly Manager[],
  changed: FieldSet,
  base: KObject,
  schema: Schema | undefined,
  opts: ApplyOptions,
): Conflict[] {
  if (opts.force) return [];
  const conflicts: Conflict[] = [];
  for (const m of others) for (const p of m.set.paths()) if (changed.has(p)) conflicts.push({ manager: m.entry, path: p });
  if (conflicts.length === 0 || opts.manager !== KUBECTL_MANAGER) return conflicts;
  const allowed = allowedFromLastApplied(base, schema);
  return conflicts.filter((c) => !allowed.has(c.path));
}

/**
 * Applies `body` to `live` (the object to update, or a seed with name and namespace when the
 * apply creates it) and returns the new object with its managedFields.
 */
export function serverSideApply(live: KObject, body: string, gvk: Gvk, opts: ApplyOptions): KObject {
  const applied = decodeApplied(body, gvk);
  checkDeclared(applied, gvk);
  const schema: Schema | undefined = schemaFor(gvk.group, gvk.version, gvk.kind);
  const mine: ManagedFieldsEntry = { manager: opts.manager, operation: 'Apply', apiVersion: apiVersionOf(gvk), time: timestampSeconds(opts.now) };
  if (opts.subresource) mine.subresource = opts.subresource;

  const { managedFields, ...liveMeta } = live.metadata ?? {};
  const base: KObject = { ...live, metadata: liveMeta };
  const merged = mergeValue(base, applied, schema) as KObject;
  const appliedSet = objectFieldSet(applied, schema);
  const managers = decodeManagers(managedFields);
  const previous = managers.find((m) => sameManager(m.entry, mine))?.set ?? new FieldSet();
  const { changed } = compareObjects(base, merged, schema);
  const conflicts = findConflicts(managers.filter((m) => !sameManager(m.entry, mine)), changed, base, schema, opts);
  if (conflicts.length > 0) throw conflictError(conflicts);

  // Applying takes the changed fields from everyone else (there was no conflict, or it was forced).
  const others = managers.filter((m) => !sameManager(m.entry, mine)).map((m) => ({ entry: m.entry, set: m.set.difference(changed) }));
  for (const p of previous.difference(appliedSet).paths()) {
    if (!ownedByAny(others, p)) removeAt(merged as Record<string, unknown>, p, schema);
  }
  if (opts.manager === KUBECTL_MANAGER) syncLastApplied(merged, applied);
  const kept = managers.map((m) => others.find((o) => o.entry === m.entry) ?? m);
  const encoded = encodeManagers(putManager(kept, { entry: { ...mine, fieldsType: 'FieldsV1' }, set: appliedSet }));
  const meta = (merged.metadata ??= {});
  if (encoded.length > 0) meta.managedFields = encoded;
  else delete meta.managedFields;
  return merged;
}
