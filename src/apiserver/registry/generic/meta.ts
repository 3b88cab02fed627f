/**
 * Metadata and error helpers every generic write step shares: namespace defaulting, omitempty
 * cleanup, managedFields stamping, field validation and the storage-error predicates.
 */
import type { KObject, ObjectMeta } from '../../../api/meta.js';
import { apiVersionOf } from '../../../api/resources.js';
import { ApiError, errors } from '../../http/errors.js';
import type { FieldError } from '../../http/field-errors.js';
import { validateSubdomainName } from '../../validation/names.js';
import { validateObjectMeta } from '../../validation/object-meta.js';
import { trackUpdate } from '../../apply/index.js';
import { managerName } from './managed-fields.js';
import { timestampSeconds } from '../../../lib/rfc3339.js';
import { deepEqual } from '../../../lib/json-value.js';
import type { RequestContext } from './strategy.js';
import type { RegistryScope, WriteOptions } from './types.js';

/** A 500 without a reason: what upstream returns for storage errors that are not Status errors. */
export class UnknownError extends ApiError {
  override toStatus(): ReturnType<ApiError['toStatus']> {
    const s = super.toStatus();
    delete s.reason;
    return s;
  }
}

/** Empty metadata maps and lists are dropped, as Go's `omitempty` drops them on the wire. */
export function omitEmptyMetadata(meta: ObjectMeta): void {
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    const v = meta[k];
    if (v !== undefined && (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0)) delete meta[k];
  }
}

export function invalidError(scope: RegistryScope, name: string, errs: FieldError[]): ApiError {
  return errors.invalid(scope.info.kind, scope.strategy.invalidGroup ?? scope.info.group, name, errs);
}

/** ObjectMeta validation with the kind's own name rule (DNS subdomain unless it says otherwise). */
export function validateMeta(scope: RegistryScope, meta: ObjectMeta): FieldError[] {
  const nameValidator = scope.strategy.validateName?.bind(scope.strategy) ?? validateSubdomainName;
  return validateObjectMeta(meta, { namespaced: scope.info.namespaced, nameValidator });
}

/** Defaults the namespace from the URL, rejects a mismatch, clears it for cluster kinds. */
export function applyNamespace(scope: RegistryScope, obj: KObject, namespace: string | undefined): void {
  const meta = (obj.metadata ??= {});
  if (!scope.info.namespaced) {
    delete meta.namespace;
    return;
  }
  if (meta.namespace && namespace !== undefined && meta.namespace !== namespace) {
    throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (!meta.namespace && namespace !== undefined) meta.namespace = namespace;
}

/**
 * Records the write in managedFields (`old` is undefined on create). Server-side apply is
 * skipped because the apply patch already recorded the applier's entry.
 */
export function stampManager(
  scope: RegistryScope,
  obj: KObject,
  old: KObject | undefined,
  ctx: RequestContext,
  opts: WriteOptions,
): void {
  if (opts.apply) return;
  trackUpdate(old, obj, scope.info, {
    manager: managerName(opts.fieldManager, opts.userAgent),
    apiVersion: apiVersionOf(scope.info),
    time: timestampSeconds(ctx.now),
    subresource: opts.subresource,
  });
}

/**
 * Whether an update changes only what the garbage collector and bookkeeping edit (owner references,
 * finalizers, managed fields): upstream's rbac.IsOnlyMutatingGCFields, which lets such updates skip the
 * checks that guard what an object grants (RBAC escalation, ClusterTrustBundle attest).
 */
export function onlyGcFieldsChange(obj: KObject, old: KObject): boolean {
  const strip = (o: KObject): KObject => {
    const meta: Record<string, unknown> = { ...o.metadata };
    for (const k of ['ownerReferences', 'finalizers', 'selfLink', 'managedFields', 'resourceVersion']) delete meta[k];
    return { ...o, metadata: meta };
  };
  return deepEqual(strip(obj), strip(old));
}
