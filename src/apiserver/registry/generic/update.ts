/**
 * One attempt of a generic update (upstream's BeforeUpdate + GuaranteedUpdate body): carry the
 * server-owned metadata over, validate and admit, then compare-and-swap the result into storage.
 */
import type { KObject, ObjectMeta } from '../../../api/meta.js';
import { errors } from '../../http/errors.js';
import { invalid } from '../../http/field-errors.js';
import { validateObjectMetaUpdate } from '../../validation/object-meta.js';
import type { StoredObject } from '../../storage/store.js';
import { ownershipChanged } from '../../apply/index.js';
import { storagePreconditionFailed } from './preconditions.js';
import { applyNamespace, invalidError, omitEmptyMetadata, stampManager, validateMeta } from './meta.js';
import { isRaceError } from '../../storage/store.js';
import { equalExcept } from '../../../lib/json-value.js';
import type { RequestContext, SubresourceStrategy } from './strategy.js';
import type { AdmissionAttributes } from './admission.js';
import { MODIFIED_MESSAGE, type RegistryScope, type WriteOptions } from './types.js';

/** One try at writing `next` over the stored `cur`; retried as a whole when the race is lost. */
export interface UpdateAttempt {
  key: string;
  cur: StoredObject;
  /** `cur` is the store's cached copy (Store.cached), possibly stale, not a read. */
  cachedCopy?: boolean;
  next: KObject;
  namespace: string | undefined;
  ctx: RequestContext;
  opts: WriteOptions;
}

/** The subresource's own strategy (status, approval, ...) when the write targets one. */
function subresourceOf(scope: RegistryScope, opts: WriteOptions): SubresourceStrategy | undefined {
  return opts.subresource ? scope.strategy.subresources?.[opts.subresource] : undefined;
}

/**
 * A resourceVersion in the new object is a precondition (409 when stale); leaving it out is
 * only allowed for kinds that accept unconditional updates.
 */
function checkResourceVersion(scope: RegistryScope, meta: ObjectMeta, oldMeta: ObjectMeta): void {
  const name = oldMeta.name ?? '';
  const rv = meta.resourceVersion;
  if (rv) {
    if (rv !== oldMeta.resourceVersion) throw errors.conflict(scope.target(name), MODIFIED_MESSAGE);
  } else if (!scope.strategy.allowUnconditionalUpdate) {
    throw invalidError(scope, name, [invalid('metadata.resourceVersion', 0, 'must be specified for an update')]);
  }
}

/**
 * Whether `cur` (undefined: missing) has the uid a PUT's body names, if any. Upstream's storage checks
 * it before anything else of the update, missing object included.
 * A cached copy failing it is read again (false) instead.
 */
export function uidHolds(
  scope: RegistryScope,
  { key, name, uid, cur, cachedCopy }: { key: string; name: string; uid: string | undefined; cur: StoredObject | undefined; cachedCopy: boolean },
): boolean {
  const current = cur?.object.metadata?.uid ?? '';
  if (!uid || uid === current) return true;
  if (cachedCopy) return false;
  throw storagePreconditionFailed(scope.target(name), key, 'UID', uid, current);
}

/** Fields clients cannot change on update: they are copied from the stored object. */
function carryServerMeta(meta: ObjectMeta, oldMeta: ObjectMeta): void {
  if (!meta.uid) meta.uid = oldMeta.uid;
  if (oldMeta.creationTimestamp) meta.creationTimestamp = oldMeta.creationTimestamp;
  if (oldMeta.deletionTimestamp) meta.deletionTimestamp = oldMeta.deletionTimestamp;
  if (oldMeta.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
  if (oldMeta.generation !== undefined) meta.generation = oldMeta.generation;
}

function prepareUpdate(scope: RegistryScope, attempt: UpdateAttempt): void {
  const { next, namespace, ctx } = attempt;
  const old = attempt.cur.object;
  scope.strategy.setDefaults?.(next);
  const meta = (next.metadata ??= {});
  const oldMeta = old.metadata ?? {};
  checkResourceVersion(scope, meta, oldMeta);
  applyNamespace(scope, next, namespace);
  omitEmptyMetadata(meta);
  carryServerMeta(meta, oldMeta);
  const sub = subresourceOf(scope, attempt.opts);
  if (sub) sub.prepareForUpdate(next, old, ctx);
  else scope.strategy.prepareForUpdate?.(next, old, ctx);
}

/** The mutating plugins, validation (422 with every field error at once), the kind's or subresource's admission, then the validating plugins. */
async function admitUpdate(scope: RegistryScope, attempt: UpdateAttempt, meta: ObjectMeta): Promise<void> {
  const { next, ctx } = attempt;
  const old = attempt.cur.object;
  const sub = subresourceOf(scope, attempt.opts);
  // One set of attributes for both phases; a phase with nothing to wait for costs no turn (most writes, Lease renewals among them).
  const attributes = updateAttributes(scope, attempt);
  const mutating = scope.env.admission?.admit(attributes);
  if (mutating) await mutating;
  const errs = [
    ...validateMeta(scope, meta),
    ...validateObjectMetaUpdate(meta, old.metadata ?? {}),
    ...((sub ? sub.validateUpdate(next, old, ctx) : scope.strategy.validateUpdate?.(next, old, ctx)) ?? []),
  ];
  if (errs.length > 0) throw invalidError(scope, old.metadata?.name ?? '', errs);
  if (sub) await sub.admit?.(next, old, ctx);
  else await scope.strategy.admit?.(next, old, ctx);
  const validating = scope.env.admission?.validate(attributes);
  if (validating) await validating;
}

function updateAttributes(scope: RegistryScope, attempt: UpdateAttempt): AdmissionAttributes {
  const { next, ctx, namespace, opts } = attempt;
  const old = attempt.cur.object;
  const subresource = opts.subresource ?? '';
  return { operation: 'UPDATE', info: scope.info, subresource, namespace, name: old.metadata?.name ?? '', object: next, oldObject: old, ctx };
}

/**
 * Writes the prepared object. An update that leaves a deleting object without finalizers
 * completes the deletion instead (the last finalizer was just removed).
 */
async function commitUpdate(scope: RegistryScope, attempt: UpdateAttempt, meta: ObjectMeta): Promise<KObject> {
  const { key, cur, next, ctx, opts } = attempt;
  const finalized = !(meta.finalizers && meta.finalizers.length > 0) && (scope.strategy.deleteDuringUpdate?.(next) ?? true);
  if (meta.deletionTimestamp && finalized) {
    if (opts.dryRun) return next;
    const gone = await scope.env.store.delete(key, cur.revision);
    await scope.env.hooks?.afterDelete?.(gone.object, ctx);
    return gone.object;
  }
  if (opts.dryRun) return { ...next, metadata: { ...meta, resourceVersion: cur.object.metadata?.resourceVersion } };
  // `next` is this attempt's own (GenericRegistry.updateOnce): the store may keep it.
  return (await scope.env.store.update(key, next, cur.revision, { handOver: true })).object;
}

/**
 * Validates, admits and writes one update; 'retry' when the compare-and-swap lost a race. A
 * no-op update returns the stored object without writing, so resourceVersion does not move.
 * On a cached copy, whatever would decide the outcome without a write (a failed precondition,
 * validation or admission, nothing to change) is 'refresh' instead: it must be decided again on a
 * read, as upstream's GuaranteedUpdate does when it started from its watch cache.
 */
export async function writeUpdate(scope: RegistryScope, attempt: UpdateAttempt): Promise<KObject | 'retry' | 'refresh'> {
  const { next, ctx, opts } = attempt;
  const old = attempt.cur.object;
  let meta: ObjectMeta;
  try {
    prepareUpdate(scope, attempt);
    meta = next.metadata ?? {};
    await admitUpdate(scope, attempt, meta);
  } catch (e) {
    if (attempt.cachedCopy) return 'refresh';
    throw e;
  }

  // A stale value (sealed with an older key) is rewritten even unchanged: that is how `kubectl replace` re-encrypts.
  if (!attempt.cur.stale && sameButBookkeeping(next, old) && !ownershipChanged(old, next)) return attempt.cachedCopy ? 'refresh' : old;
  stampManager(scope, next, old, ctx, opts);
  delete meta.resourceVersion;
  try {
    return await commitUpdate(scope, attempt, meta);
  } catch (e) {
    if (isRaceError(e)) return 'retry';
    throw e;
  }
}

const METADATA = new Set(['metadata']);
const BOOKKEEPING = new Set(['resourceVersion', 'managedFields']);

/**
 * Whether two objects are equal but for server-written bookkeeping (resourceVersion, managedFields),
 * compared where they stand: copies without those fields cost more than the comparison itself.
 */
function sameButBookkeeping(a: KObject, b: KObject): boolean {
  return equalExcept(a, b, METADATA) && equalExcept(a.metadata ?? {}, b.metadata ?? {}, BOOKKEEPING);
}
