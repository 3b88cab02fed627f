/**
 * One attempt of a generic delete (upstream's Store.Delete): preconditions, the kind's own
 * termination step, graceful deletion for objects with finalizers, and the removal itself.
 */
import type { KObject, ObjectMeta } from '../../../api/meta.js';
import { errors } from '../../http/errors.js';
import type { StoredObject } from '../../storage/store.js';
import { cloneObject, deepEqual } from '../../../lib/json-value.js';
import { timestampSeconds } from '../../../lib/rfc3339.js';
import type { RequestContext } from './strategy.js';
import type { DeleteParams, RegistryScope } from './types.js';

/** One try at deleting the stored `cur`; retried as a whole when the compare-and-swap race is lost. */
export interface DeleteAttempt {
  key: string;
  cur: StoredObject;
  ctx: RequestContext;
  params: DeleteParams;
}

export interface DeleteResult {
  object: KObject;
  /** False when the object stays (finalizers pending, or the kind kept it). */
  deleted: boolean;
}

/**
 * DeleteOptions.preconditions: 409 when uid or resourceVersion differ, in upstream's BeforeDelete
 * words, which name the object by its kind (`ServiceAccount "x"`, `Lease.coordination.k8s.io "x"`).
 */
export function checkDeletePreconditions(scope: RegistryScope, name: string, meta: ObjectMeta, params: DeleteParams): void {
  const pre = params.preconditions;
  const target = { group: scope.info.group, resource: scope.info.kind, name };
  if (pre?.uid && pre.uid !== meta.uid) {
    const why = `the UID in the precondition (${pre.uid}) does not match the UID in record (${meta.uid ?? ''}). The object might have been deleted and then recreated`;
    throw errors.conflict(target, why);
  }
  if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
    const why = `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion ?? ''}). The object might have been modified`;
    throw errors.conflict(target, why);
  }
}

/** The kind's own deletion step (RegistryHooks.terminate): the object kept, or undefined to go on. */
async function terminate(scope: RegistryScope, attempt: DeleteAttempt): Promise<KObject | undefined> {
  const { key, cur, ctx, params } = attempt;
  const kept = scope.env.hooks?.terminate?.(cloneObject(cur.object), ctx);
  if (!kept || deepEqual(kept, cur.object) || params.dryRun) return kept;
  const stored = (await scope.env.store.update(key, kept, cur.revision)).object;
  await scope.env.hooks?.afterTerminate?.(stored, ctx);
  return stored;
}

/**
 * Graceful deletion: an object with finalizers only gets its deletionTimestamp; it stays until
 * the last finalizer is removed (the update path then deletes it). Repeated deletes are no-ops.
 */
async function markDeleting(scope: RegistryScope, attempt: DeleteAttempt): Promise<DeleteResult> {
  const { key, cur, ctx, params } = attempt;
  if (cur.object.metadata?.deletionTimestamp) return { object: cur.object, deleted: false };
  const next = cloneObject(cur.object);
  next.metadata = { ...next.metadata, deletionTimestamp: timestampSeconds(ctx.now), deletionGracePeriodSeconds: 0 };
  if (params.dryRun) return { object: next, deleted: false };
  return { object: (await scope.env.store.update(key, next, cur.revision)).object, deleted: false };
}

/** Terminates, marks or removes the object; storage race errors propagate for the caller to retry. */
export async function deleteOnce(scope: RegistryScope, attempt: DeleteAttempt): Promise<DeleteResult> {
  const { key, cur, ctx, params } = attempt;
  const kept = await terminate(scope, attempt);
  if (kept) return { object: kept, deleted: false };
  const finalizers = cur.object.metadata?.finalizers;
  if (finalizers && finalizers.length > 0) return markDeleting(scope, attempt);
  if (params.dryRun) return { object: cur.object, deleted: true };
  const gone = await scope.env.store.delete(key, cur.revision);
  await scope.env.hooks?.afterDelete?.(gone.object, ctx);
  return { object: gone.object, deleted: true };
}
