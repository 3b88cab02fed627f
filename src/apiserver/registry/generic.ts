/**
 * The generic registry (upstream's genericregistry.Store): one per resource, combining its
 * Strategy with the Store. It owns everything every kind shares on writes: server-set metadata,
 * namespace rules, name generation, validation, optimistic concurrency, finalizers and dry runs.
 */
import { randomUUID } from 'node:crypto';
import type { KObject, ObjectMeta } from '../../api/meta.js';
import { apiVersionOf, type ResourceInfo } from '../../api/resources.js';
import { ApiError, type Target, errors } from '../errors.js';
import { type FieldError, invalid } from '../field-errors.js';
import { generateName, validateSubdomainName } from '../validation/names.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/object-meta.js';
import { type Store, type StoredObject, StoreError, storageKey } from '../storage/store.js';
import { ownershipChanged, trackUpdate } from '../apply/index.js';
import { managerName } from './managed-fields.js';
import { cloneObject, deepEqual, timestampSeconds, withoutBookkeeping } from './object-util.js';
import type { RequestContext, Strategy } from './strategy.js';

export const MODIFIED_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

/** Per-kind side effects the generic flow cannot know (namespace contents, default accounts). */
export interface RegistryHooks {
  afterCreate?(obj: KObject, ctx: RequestContext): Promise<void>;
  beforeDelete?(obj: KObject, ctx: RequestContext): Promise<void>;
  afterDelete?(obj: KObject, ctx: RequestContext): Promise<void>;
  /**
   * A kind's own deletion step (upstream's namespace Delete): the object to keep instead of
   * removing it, or undefined for the generic deletion. Unchanged objects are not written.
   */
  terminate?(obj: KObject, ctx: RequestContext): KObject | undefined;
  /** Runs once `terminate` has stored a changed object (dry runs excluded). */
  afterTerminate?(obj: KObject, ctx: RequestContext): Promise<void>;
}

export interface RegistryEnv {
  store: Store;
  /** NamespaceLifecycle admission for namespaced creates: 404 when missing, 403 when terminating. */
  checkNamespace?(namespace: string, target: Target): Promise<void>;
  hooks?: RegistryHooks;
}

export interface WriteOptions {
  dryRun: boolean;
  fieldManager?: string;
  userAgent?: string;
  subresource?: string;
  /** A server-side apply: the patch already recorded the applier's managedFields entry. */
  apply?: boolean;
}

export interface DeleteParams {
  dryRun: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

const MAX_ATTEMPTS = 8;

/** A 500 without a reason: what upstream returns for storage errors that are not Status errors. */
class UnknownError extends ApiError {
  override toStatus(): ReturnType<ApiError['toStatus']> {
    const s = super.toStatus();
    delete s.reason;
    return s;
  }
}

/** Empty metadata maps and lists are dropped, as Go's `omitempty` drops them on the wire. */
function omitEmptyMetadata(meta: ObjectMeta): void {
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    const v = meta[k];
    if (v !== undefined && (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0)) delete meta[k];
  }
}

function isStoreError(e: unknown, code: StoreError['code']): boolean {
  return e instanceof StoreError && e.code === code;
}

export class GenericRegistry {
  readonly info: ResourceInfo;

  constructor(
    readonly strategy: Strategy,
    private readonly env: RegistryEnv,
  ) {
    this.info = strategy.info;
  }

  get store(): Store {
    return this.env.store;
  }

  target(name?: string): Target {
    return { group: this.info.group, resource: this.info.plural, name };
  }

  key(namespace: string | undefined, name: string): string {
    return storageKey(this.info.group, this.info.plural, this.info.namespaced ? namespace : undefined, name);
  }

  /** The collection prefix; all namespaces when `namespace` is undefined. */
  prefix(namespace: string | undefined): string {
    return storageKey(this.info.group, this.info.plural, this.info.namespaced ? namespace : undefined);
  }

  async get(namespace: string | undefined, name: string): Promise<KObject> {
    const found = await this.store.get(this.key(namespace, name));
    if (!found) throw errors.notFound(this.target(name));
    return found.object;
  }

  private invalid(name: string, errs: FieldError[]): ApiError {
    return errors.invalid(this.info.kind, this.info.group, name, errs);
  }

  private nameValidator(): (name: string, prefix: boolean) => string[] {
    return this.strategy.validateName?.bind(this.strategy) ?? validateSubdomainName;
  }

  /** Defaults the namespace from the URL, rejects a mismatch, clears it for cluster kinds. */
  private applyNamespace(obj: KObject, namespace: string | undefined): void {
    const meta = (obj.metadata ??= {});
    if (!this.info.namespaced) {
      delete meta.namespace;
      return;
    }
    if (meta.namespace && namespace !== undefined && meta.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (!meta.namespace && namespace !== undefined) meta.namespace = namespace;
  }

  /** Records the write in managedFields (`old` is undefined on create). */
  private stampManager(obj: KObject, old: KObject | undefined, ctx: RequestContext, opts: WriteOptions): void {
    if (opts.apply) return;
    trackUpdate(old, obj, this.info, {
      manager: managerName(opts.fieldManager, opts.userAgent),
      apiVersion: apiVersionOf(this.info),
      time: timestampSeconds(ctx.now),
      subresource: opts.subresource,
    });
  }

  async create(namespace: string | undefined, input: KObject, ctx: RequestContext, opts: WriteOptions): Promise<KObject> {
    const obj = cloneObject(input);
    const meta = (obj.metadata ??= {});
    if (meta.resourceVersion) {
      throw new UnknownError(500, '', 'resourceVersion should not be set on objects to be created');
    }
    this.applyNamespace(obj, namespace);
    omitEmptyMetadata(meta);
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    meta.uid = randomUUID();
    meta.creationTimestamp = timestampSeconds(ctx.now);
    this.strategy.prepareForCreate?.(obj, ctx);
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = generateName(meta.generateName ?? '');

    const errs = [
      ...validateObjectMeta(meta, { namespaced: this.info.namespaced, nameValidator: this.nameValidator() }),
      ...(this.strategy.validate?.(obj, ctx) ?? []),
    ];
    if (errs.length > 0) throw this.invalid(meta.name ?? '', errs);
    if (this.info.namespaced && meta.namespace && this.env.checkNamespace) {
      await this.env.checkNamespace(meta.namespace, this.target(meta.name));
    }
    await this.strategy.admit?.(obj, undefined, ctx);
    this.stampManager(obj, undefined, ctx, opts);

    for (let attempt = 1; ; attempt++) {
      const name = meta.name ?? '';
      const key = this.key(meta.namespace, name);
      if (opts.dryRun) {
        if (await this.store.get(key)) throw errors.alreadyExists(this.target(name));
        return obj;
      }
      try {
        const stored = await this.store.create(key, obj);
        await this.env.hooks?.afterCreate?.(stored.object, ctx);
        return stored.object;
      } catch (e) {
        if (!isStoreError(e, 'KeyExists')) throw e;
        if (!generated) throw errors.alreadyExists(this.target(name));
        if (attempt >= MAX_ATTEMPTS) {
          const base = errors.alreadyExists(this.target(name));
          throw new ApiError(
            409,
            'AlreadyExists',
            `${base.message}, the server was not able to generate a unique name for the object`,
            base.details,
          );
        }
        meta.name = generateName(meta.generateName ?? '');
      }
    }
  }

  /**
   * Read-modify-write with compare-and-swap, retried when another writer got in between.
   * `tryUpdate` gets a mutable copy of the current object and returns the desired one; a
   * resourceVersion it carries is a precondition (409 on mismatch).
   */
  async update(
    namespace: string | undefined,
    name: string,
    ctx: RequestContext,
    opts: WriteOptions,
    tryUpdate: (current: KObject) => KObject | Promise<KObject>,
    createIfMissing?: () => KObject | Promise<KObject>,
  ): Promise<{ object: KObject; created: boolean }> {
    const key = this.key(namespace, name);
    for (let attempt = 1; ; attempt++) {
      const cur = await this.store.get(key);
      if (!cur) {
        if (createIfMissing && !opts.subresource) {
          return { object: await this.create(namespace, await createIfMissing(), ctx, opts), created: true };
        }
        throw errors.notFound(this.target(name));
      }
      const next = cloneObject(await tryUpdate(cloneObject(cur.object)));
      const outcome = await this.writeUpdate(key, cur, next, namespace, ctx, opts);
      if (outcome !== 'retry') return { object: outcome, created: false };
      if (attempt >= MAX_ATTEMPTS) throw errors.conflict(this.target(name), MODIFIED_MESSAGE);
    }
  }

  private prepareUpdate(next: KObject, old: KObject, namespace: string | undefined, ctx: RequestContext, opts: WriteOptions): void {
    const meta = (next.metadata ??= {});
    const oldMeta = old.metadata ?? {};
    const name = oldMeta.name ?? '';
    const rv = meta.resourceVersion;
    if (rv) {
      if (rv !== oldMeta.resourceVersion) throw errors.conflict(this.target(name), MODIFIED_MESSAGE);
    } else if (!this.strategy.allowUnconditionalUpdate) {
      throw this.invalid(name, [invalid('metadata.resourceVersion', 0, 'must be specified for an update')]);
    }
    this.applyNamespace(next, namespace);
    omitEmptyMetadata(meta);
    if (!meta.uid) meta.uid = oldMeta.uid;
    if (oldMeta.creationTimestamp) meta.creationTimestamp = oldMeta.creationTimestamp;
    if (oldMeta.deletionTimestamp) meta.deletionTimestamp = oldMeta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    if (oldMeta.generation !== undefined) meta.generation = oldMeta.generation;
    const sub = opts.subresource ? this.strategy.subresources?.[opts.subresource] : undefined;
    if (sub) sub.prepareForUpdate(next, old, ctx);
    else this.strategy.prepareForUpdate?.(next, old, ctx);
  }

  /** Validates, admits and writes one update; 'retry' when the compare-and-swap lost a race. */
  private async writeUpdate(
    key: string,
    cur: StoredObject,
    next: KObject,
    namespace: string | undefined,
    ctx: RequestContext,
    opts: WriteOptions,
  ): Promise<KObject | 'retry'> {
    const old = cur.object;
    this.prepareUpdate(next, old, namespace, ctx, opts);
    const meta = next.metadata ?? {};
    const sub = opts.subresource ? this.strategy.subresources?.[opts.subresource] : undefined;
    const errs = [
      ...validateObjectMeta(meta, { namespaced: this.info.namespaced, nameValidator: this.nameValidator() }),
      ...validateObjectMetaUpdate(meta, old.metadata ?? {}),
      ...((sub ? sub.validateUpdate(next, old, ctx) : this.strategy.validateUpdate?.(next, old, ctx)) ?? []),
    ];
    if (errs.length > 0) throw this.invalid(old.metadata?.name ?? '', errs);
    if (sub) await sub.admit?.(next, old, ctx);
    else await this.strategy.admit?.(next, old, ctx);

    if (deepEqual(withoutBookkeeping(next), withoutBookkeeping(old)) && !ownershipChanged(old, next)) return old;
    this.stampManager(next, old, ctx, opts);
    delete meta.resourceVersion;
    try {
      if (meta.deletionTimestamp && !(meta.finalizers && meta.finalizers.length > 0)) {
        if (opts.dryRun) return next;
        const gone = await this.store.delete(key, cur.revision);
        await this.env.hooks?.afterDelete?.(gone.object, ctx);
        return gone.object;
      }
      if (opts.dryRun) return { ...next, metadata: { ...meta, resourceVersion: old.metadata?.resourceVersion } };
      return (await this.store.update(key, next, cur.revision)).object;
    } catch (e) {
      if (isStoreError(e, 'Conflict') || isStoreError(e, 'KeyNotFound')) return 'retry';
      throw e;
    }
  }

  /** The kind's own deletion step (RegistryHooks.terminate): the object kept, or undefined to go on. */
  private async terminate(key: string, cur: StoredObject, ctx: RequestContext, params: DeleteParams): Promise<KObject | undefined> {
    const kept = this.env.hooks?.terminate?.(cloneObject(cur.object), ctx);
    if (!kept || deepEqual(kept, cur.object) || params.dryRun) return kept;
    const stored = (await this.store.update(key, kept, cur.revision)).object;
    await this.env.hooks?.afterTerminate?.(stored, ctx);
    return stored;
  }

  /**
   * Deletes an object, or starts graceful deletion when it has finalizers (deletionTimestamp is
   * set and the object stays until the last finalizer is removed).
   */
  async delete(
    namespace: string | undefined,
    name: string,
    ctx: RequestContext,
    params: DeleteParams,
  ): Promise<{ object: KObject; deleted: boolean }> {
    const key = this.key(namespace, name);
    for (let attempt = 1; ; attempt++) {
      const cur = await this.store.get(key);
      if (!cur) throw errors.notFound(this.target(name));
      const meta = cur.object.metadata ?? {};
      const pre = params.preconditions;
      if (pre?.uid && pre.uid !== meta.uid) {
        throw errors.conflict(this.target(name), `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid ?? ''}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
        throw errors.conflict(
          this.target(name),
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ''}`,
        );
      }
      await this.env.hooks?.beforeDelete?.(cur.object, ctx);
      try {
        const kept = await this.terminate(key, cur, ctx, params);
        if (kept) return { object: kept, deleted: false };
        if (meta.finalizers && meta.finalizers.length > 0) {
          if (meta.deletionTimestamp) return { object: cur.object, deleted: false };
          const next = cloneObject(cur.object);
          next.metadata = { ...next.metadata, deletionTimestamp: timestampSeconds(ctx.now), deletionGracePeriodSeconds: 0 };
          if (params.dryRun) return { object: next, deleted: false };
          return { object: (await this.store.update(key, next, cur.revision)).object, deleted: false };
        }
        if (params.dryRun) return { object: cur.object, deleted: true };
        const gone = await this.store.delete(key, cur.revision);
        await this.env.hooks?.afterDelete?.(gone.object, ctx);
        return { object: gone.object, deleted: true };
      } catch (e) {
        if (!(isStoreError(e, 'Conflict') || isStoreError(e, 'KeyNotFound')) || attempt >= MAX_ATTEMPTS) throw e;
      }
    }
  }
}
