/**
 * The steps of a generic create (upstream's BeforeCreate + Store.Create): server-set metadata,
 * validation and admission, then the storage write with generateName retries.
 */
import { randomUUID } from 'node:crypto';
import type { KObject, ObjectMeta } from '../../../api/meta.js';
import { ApiError, errors } from '../../http/errors.js';
import { generateName } from '../../validation/names.js';
import { invalidError, applyNamespace, omitEmptyMetadata, validateMeta } from './meta.js';
import { isStoreError } from '../../storage/store.js';
import { timestampSeconds } from '../../../lib/rfc3339.js';
import type { AdmissionAttributes } from './admission.js';
import type { RequestContext } from './strategy.js';
import { MAX_ATTEMPTS, type RegistryScope } from './types.js';

/** A create being carried out: its object, the metadata it is stamped on, and whether the name was generated. */
export interface PendingCreate {
  obj: KObject;
  meta: ObjectMeta;
  /** The name came from generateName, so a clash is retried with a fresh name instead of a 409. */
  generated: boolean;
}

/**
 * Sets what only the server may set: a fresh uid and creationTimestamp, no deletion state, the
 * namespace from the URL and a generated name. A client-sent resourceVersion is a 500, as upstream.
 */
export function prepareCreate(
  scope: RegistryScope,
  obj: KObject,
  namespace: string | undefined,
  ctx: RequestContext,
): PendingCreate {
  scope.strategy.setDefaults?.(obj);
  const meta = (obj.metadata ??= {});
  if (meta.resourceVersion) {
    // Upstream's storage answers this with a 500; it is the client's mistake, so a 400 here (docs/compatibility.md).
    throw errors.badRequest('resourceVersion should not be set on objects to be created');
  }
  applyNamespace(scope, obj, namespace);
  omitEmptyMetadata(meta);
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  meta.uid = randomUUID();
  meta.creationTimestamp = timestampSeconds(ctx.now);
  scope.strategy.prepareForCreate?.(obj, ctx);
  const generated = !meta.name && !!meta.generateName;
  if (generated) meta.name = generateName(meta.generateName ?? '');
  return { obj, meta, generated };
}

/**
 * Admission and validation in upstream's order: NamespaceLifecycle, the mutating plugins, validation
 * (422 with every field error at once), the kind's own admission, then the validating plugins, each
 * after the one before it. Throws what it can tell at once, and returns a promise only when a step
 * has to wait: each turn of the event loop a create waits through costs it.
 */
export function admitCreate(scope: RegistryScope, pending: PendingCreate, ctx: RequestContext): Promise<void> | undefined {
  const { meta } = pending;
  const { checkNamespace } = scope.env;
  const waiting = scope.info.namespaced && meta.namespace && checkNamespace ? checkNamespace(meta.namespace, scope.target(meta.name)) : undefined;
  const mutate = (): Promise<void> | undefined => scope.env.admission?.admit(attributes(scope, pending, ctx));
  const mutating = waiting ? waiting.then(mutate) : mutate();
  return mutating ? mutating.then(() => validateCreate(scope, pending, ctx)) : validateCreate(scope, pending, ctx);
}

function attributes(scope: RegistryScope, { obj, meta }: PendingCreate, ctx: RequestContext): AdmissionAttributes {
  return { operation: 'CREATE', info: scope.info, subresource: '', namespace: meta.namespace, name: meta.name ?? '', object: obj, oldObject: undefined, ctx };
}

/** Validation, the kind's own admission, then the server's validating chain. */
function validateCreate(scope: RegistryScope, pending: PendingCreate, ctx: RequestContext): Promise<void> | undefined {
  const { obj, meta } = pending;
  const errs = [...validateMeta(scope, meta), ...(scope.strategy.validate?.(obj, ctx) ?? [])];
  if (errs.length > 0) throw invalidError(scope, meta.name ?? '', errs);
  const chain = (): Promise<void> | undefined => scope.env.admission?.validate(attributes(scope, pending, ctx));
  return scope.strategy.admit ? scope.strategy.admit(obj, undefined, ctx).then(chain) : chain();
}

/** Upstream's message when every generated name it tried was taken. */
function namesExhausted(scope: RegistryScope, name: string): ApiError {
  const base = errors.alreadyExists(scope.target(name));
  return new ApiError(
    409,
    'AlreadyExists',
    `${base.message}, the server was not able to generate a unique name for the object`,
    base.details,
  );
}

/**
 * Stores the object (or, on a dry run, only checks the name is free). A taken generated name is
 * regenerated up to MAX_ATTEMPTS times; a taken explicit name is a 409 straight away. The store's
 * own promise carries the result, with no async step of its own between the commit and the caller.
 */
export function persistCreate(scope: RegistryScope, pending: PendingCreate, ctx: RequestContext, dryRun: boolean, attempt = 1): Promise<KObject> {
  const { obj, meta, generated } = pending;
  const name = meta.name ?? '';
  const key = scope.key(meta.namespace, name);
  if (dryRun) {
    return scope.env.store.get(key).then((found) => {
      if (found) throw errors.alreadyExists(scope.target(name));
      return obj;
    });
  }
  const { hooks } = scope.env;
  // `obj` is this create's own (a copy, or a body handed over): the store may keep it.
  return scope.env.store.create(key, obj, { handOver: true }).then(
    (stored) => (hooks?.afterCreate ? hooks.afterCreate(stored.object, ctx).then(() => stored.object) : stored.object),
    (e: unknown) => {
      if (!isStoreError(e, 'KeyExists')) throw e;
      if (!generated) throw errors.alreadyExists(scope.target(name));
      if (attempt >= MAX_ATTEMPTS) throw namesExhausted(scope, name);
      meta.name = generateName(meta.generateName ?? '');
      return persistCreate(scope, pending, ctx, dryRun, attempt + 1);
    },
  );
}
