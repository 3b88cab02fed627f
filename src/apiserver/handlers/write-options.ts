/**
 * CreateOptions / UpdateOptions / PatchOptions from the query string (dryRun, fieldManager,
 * fieldValidation, force) and the fieldValidation treatment of unknown or duplicate fields.
 */
import { errors } from '../http/errors.js';
import { type FieldError, forbidden, notSupported, required } from '../http/field-errors.js';
import { validateFieldManager } from '../validation/object-meta.js';
import { queryBool } from '../http/query-params.js';
import type { RequestContext } from '../registry/generic/strategy.js';

export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface WriteParams {
  dryRun: boolean;
  fieldManager?: string;
  fieldValidation: FieldValidation;
  force: boolean;
}

/** dryRun: only `All` is supported. */
export function dryRunErrors(values: string[]): FieldError[] {
  return values.some((v) => v !== 'All') ? [notSupported('dryRun', values, ['All'])] : [];
}

export function parseWriteParams(query: URLSearchParams, kind: OptionsKind, apply = false): WriteParams {
  const errs: FieldError[] = [];
  const dryRun = query.getAll('dryRun');
  errs.push(...dryRunErrors(dryRun));
  const fieldManager = query.get('fieldManager') ?? undefined;
  if (fieldManager !== undefined) errs.push(...validateFieldManager(fieldManager, 'fieldManager'));
  const fv = query.get('fieldValidation') ?? '';
  if (!['', 'Ignore', 'Warn', 'Strict'].includes(fv)) {
    errs.push(notSupported('fieldValidation', fv, ['', 'Ignore', 'Strict', 'Warn']));
  }
  const force = queryBool(query, 'force');
  if (kind === 'PatchOptions') {
    if (apply && !fieldManager) errs.push(required('fieldManager', 'is required for apply patch'));
    if (!apply && force !== undefined) errs.push(forbidden('force', 'may not be specified for non-apply patch'));
  }
  if (errs.length > 0) throw errors.invalid(kind, 'meta.k8s.io', '', errs);
  return {
    dryRun: dryRun.length > 0,
    fieldManager,
    fieldValidation: fv === '' ? 'Warn' : (fv as FieldValidation),
    force: force ?? false,
  };
}

/**
 * Applies fieldValidation to the problems found while decoding: Strict fails (a body's decoder
 * with 400; `strictError` words other failures, such as a patch's 422), Warn adds one Warning per
 * problem, Ignore drops them. A patch retried on a conflict finds them again: as upstream's
 * warning recorder, a warning already given is not repeated.
 */
export function checkFieldProblems(
  gvk: { version: string; kind: string },
  problems: string[],
  mode: FieldValidation,
  ctx: RequestContext,
  strictError?: (detail: string) => Error,
): void {
  if (problems.length === 0 || mode === 'Ignore') return;
  if (mode === 'Strict') {
    const detail = `strict decoding error: ${problems.join(', ')}`;
    throw strictError ? strictError(detail) : errors.badRequest(`${gvk.kind} in version "${gvk.version}" cannot be handled as a ${gvk.kind}: ${detail}`);
  }
  for (const problem of problems) if (!ctx.warnings.includes(problem)) ctx.warnings.push(problem);
}

/** The decoding problems of a body: duplicate fields plus unknown ones found by the schema hook. */
export function fieldProblems(duplicates: string[], unknown: string[]): string[] {
  return [...unknown.map((f) => `unknown field "${f}"`), ...duplicates.map((f) => `duplicate field "${f}"`)];
}
