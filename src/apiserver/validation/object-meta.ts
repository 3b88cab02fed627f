/**
 * ObjectMeta validation on create and update (apimachinery's ValidateObjectMetaAccessor and
 * ValidateObjectMetaAccessorUpdate), with upstream's field paths and messages.
 */
import type { ManagedFieldsEntry, ObjectMeta, OwnerReference } from '../../api/meta.js';
import { type FieldError, forbidden, invalid, required, tooLong } from '../http/field-errors.js';
import { type NameValidator, byteLength, isQualifiedName, isValidLabelValue, validateLabelName } from './names.js';
import { parseApiVersion } from '../../api/resources.js';

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
const FIELD_IMMUTABLE = 'field is immutable';
const IS_NEGATIVE = 'must be greater than or equal to 0';
const FINALIZER_ORPHAN = 'orphan';
const FINALIZER_FOREGROUND = 'foregroundDeletion';

export interface ObjectMetaOptions {
  namespaced: boolean;
  nameValidator: NameValidator;
}

export function validateObjectMeta(meta: ObjectMeta, opts: ObjectMetaOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) {
    for (const m of opts.nameValidator(meta.generateName, true)) {
      errs.push(invalid('metadata.generateName', meta.generateName, m));
    }
  }
  if (!meta.name) errs.push(required('metadata.name', 'name or generateName is required'));
  else for (const m of opts.nameValidator(meta.name, false)) errs.push(invalid('metadata.name', meta.name, m));

  if (opts.namespaced) {
    if (!meta.namespace) errs.push(required('metadata.namespace'));
    else for (const m of validateLabelName(meta.namespace, false)) errs.push(invalid('metadata.namespace', meta.namespace, m));
  } else if (meta.namespace) {
    errs.push(forbidden('metadata.namespace', 'not allowed on this type'));
  }
  if ((meta.generation ?? 0) < 0) errs.push(invalid('metadata.generation', meta.generation, IS_NEGATIVE));
  errs.push(...validateLabels(meta.labels, 'metadata.labels'));
  errs.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
  errs.push(...validateOwnerReferences(meta.ownerReferences, 'metadata.ownerReferences'));
  errs.push(...validateFinalizers(meta.finalizers, 'metadata.finalizers'));
  errs.push(...validateManagedFields(meta.managedFields, 'metadata.managedFields'));
  return errs;
}

export interface ObjectMetaUpdateOptions {
  /**
   * Upstream's `resourceVersion: must be specified for an update`. Off by default: the store fills
   * the live resourceVersion in before validation on unconditional updates.
   */
  requireResourceVersion?: boolean;
}

export function validateObjectMetaUpdate(
  newMeta: ObjectMeta,
  oldMeta: ObjectMeta,
  opts: ObjectMetaUpdateOptions = {},
): FieldError[] {
  const errs: FieldError[] = [];
  if (oldMeta.deletionTimestamp) {
    const old = new Set(oldMeta.finalizers ?? []);
    const extra = [...new Set((newMeta.finalizers ?? []).filter((f) => !old.has(f)))].sort();
    if (extra.length > 0) {
      const list = `[]string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`;
      errs.push(
        forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers ${list}`,
        ),
      );
    }
  }
  if (opts.requireResourceVersion && !newMeta.resourceVersion) {
    errs.push(invalid('metadata.resourceVersion', newMeta.resourceVersion ?? '', 'must be specified for an update'));
  }
  if ((newMeta.generation ?? 0) < (oldMeta.generation ?? 0)) {
    errs.push(invalid('metadata.generation', newMeta.generation ?? 0, 'must not be decremented'));
  }
  const immutable = (field: keyof ObjectMeta, dflt: unknown): void => {
    const n = newMeta[field] ?? dflt;
    if (n !== (oldMeta[field] ?? dflt)) errs.push(invalid(`metadata.${field}`, n, FIELD_IMMUTABLE));
  };
  immutable('name', '');
  immutable('namespace', '');
  immutable('uid', '');
  immutable('creationTimestamp', null);
  immutable('deletionTimestamp', null);
  immutable('deletionGracePeriodSeconds', null);
  errs.push(...validateLabels(newMeta.labels, 'metadata.labels'));
  errs.push(...validateAnnotations(newMeta.annotations, 'metadata.annotations'));
  errs.push(...validateOwnerReferences(newMeta.ownerReferences, 'metadata.ownerReferences'));
  errs.push(...validateManagedFields(newMeta.managedFields, 'metadata.managedFields'));
  return errs;
}

/** v1validation.ValidateLabels: every error is reported against the labels path itself. */
export function validateLabels(labels: Record<string, string> | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) errs.push(invalid(field, k, m));
    for (const m of isValidLabelValue(String(v))) errs.push(invalid(field, v, m));
  }
  return errs;
}

/** Keys are qualified names compared case-insensitively; keys plus values at most 256 KiB. */
export function validateAnnotations(annotations: Record<string, string> | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(field, k, m));
    total += byteLength(k) + byteLength(String(v));
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

function validateOwnerReference(ref: OwnerReference, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const gv = parseApiVersion(ref.apiVersion ?? '');
  if (!gv.version) errs.push(invalid(`${field}.apiVersion`, ref.apiVersion ?? '', 'version must not be empty'));
  if (!ref.kind) errs.push(invalid(`${field}.kind`, ref.kind ?? '', 'kind must not be empty'));
  if (!ref.name) errs.push(invalid(`${field}.name`, ref.name ?? '', 'name must not be empty'));
  if (!ref.uid) errs.push(invalid(`${field}.uid`, ref.uid ?? '', 'uid must not be empty'));
  if (gv.group === '' && gv.version === 'v1' && ref.kind === 'Event') {
    errs.push(invalid(field, ref, '/v1, Kind=Event is disallowed from being an owner'));
  }
  return errs;
}

export function validateOwnerReferences(refs: OwnerReference[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs ?? []) {
    errs.push(...validateOwnerReference(ref, field));
    if (ref.controller === true) {
      const current = `${ref.kind}/${ref.name}`;
      if (firstController) {
        errs.push(
          invalid(
            field,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

export function validateFinalizers(finalizers: string[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of finalizers ?? []) for (const m of isQualifiedName(f)) errs.push(invalid(field, f, m));
  const list = finalizers ?? [];
  if (list.includes(FINALIZER_ORPHAN) && list.includes(FINALIZER_FOREGROUND)) {
    errs.push(invalid(field, list, `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`));
  }
  return errs;
}

export function validateManagedFields(entries: ManagedFieldsEntry[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  (entries ?? []).forEach((e, i) => {
    const at = `${field}[${i}]`;
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      errs.push(invalid(`${at}.operation`, e.operation ?? '', 'must be `Apply` or `Update`'));
    }
    if (e.fieldsType && e.fieldsType !== 'FieldsV1') {
      errs.push(invalid(`${at}.fieldsType`, e.fieldsType, 'must be `FieldsV1`'));
    }
    errs.push(...validateFieldManager(e.manager ?? '', `${at}.manager`));
    if (byteLength(e.subresource ?? '') > 256) errs.push(tooLong(`${at}.subresource`, 256));
  });
  return errs;
}

const FIELD_MANAGER_MAX = 128;
/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** ValidateFieldManager, for managedFields entries and the `fieldManager` query parameter. */
export function validateFieldManager(manager: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (byteLength(manager) > FIELD_MANAGER_MAX) errs.push(tooLong(field, FIELD_MANAGER_MAX));
  let pos = 0;
  for (const ch of manager) {
    if (!PRINTABLE.test(ch)) {
      const cp = (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
      errs.push(invalid(field, manager, `invalid character U+${cp} (at position ${pos})`));
    }
    pos += byteLength(ch);
  }
  return errs;
}
