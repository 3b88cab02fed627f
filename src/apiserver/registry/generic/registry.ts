/**
 * The generic registry (upstream's genericregistry.Store): one per resource, combining its
 * Strategy with the Store. It owns everything every kind shares on writes: server-set metadata,
 * namespace rules, name generation, validation, optimistic concurrency, finalizers and dry runs.
 * The write steps live in generic-create.ts, generic-update.ts and generic-delete.ts; this class
 * holds the retry loops around them and the read-side helpers handlers use.
 */
import type { KObject } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import { type Target, errors } from '../../http/errors.js';
import { type Store, type StoredObject, storageKey } from '../../storage/store.js';
import { cloneObject } from '../../../lib/json-value.js';
import type { RequestContext, Strategy } from './strategy.js';
import { stampManager } from './meta.js';
import { isRaceError } from '../../storage/store.js';
import { admitCreate, persistCreate, prepareCreate } from './create.js';
import { uidHolds, writeUpdate, type UpdateAttempt } from './update.js';
import { checkDeletePreconditions, deleteOnce, type DeleteResult } from './delete.js';
import {
  MAX_ATTEMPTS,
  type DeleteParams,
  type RegistryEnv,
  type RegistryScope,
  type UpdateChange,
  type WriteOptions,
} from './types.js';

export {
  MODIFIED_MESSAGE,
  type DeleteParams,
  type RegistryEnv,
  type RegistryHooks,
  type UpdateChange,
  type WriteOptions,
} from './types.js';

export class GenericRegistry {
  readonly info: ResourceInfo;
  /** What the write steps see of this registry. */
  private readonly scope: RegistryScope;

  constructor(
    readonly strategy: Strategy,
    private readonly env: RegistryEnv,
  ) {
    this.info = strategy.info;
    this.scope = {
      info: this.info,
      strategy,
      env,
      key: (namespace, name) => this.key(namespace, name),
      target: (name) => this.target(name),
    };
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

  /**
   * The admission chain for a create this registry does not store itself (a virtual
   * subresource such as serviceaccounts/token): its plugins see the request body as the object.
   */
  async admitVirtualCreate(namespace: string | undefined, name: string, subresource: string, object: KObject, ctx: RequestContext): Promise<void> {
    const attributes = { operation: 'CREATE', info: this.info, subresource, namespace, name, object, oldObject: undefined, ctx } as const;
    await this.env.admission?.admit(attributes);
    await this.env.admission?.validate(attributes);
  }

  /** The key's current state, without a turn of the event loop when the store can tell it at once. */
  private read(key: string): StoredObject | undefined | Promise<StoredObject | undefined> {
    const now = this.store.readNow?.(key);
    return now === undefined ? this.store.get(key) : (now ?? undefined);
  }

  /** The stored object, from the store's index without an async step of its own when it can tell at once. */
  get(namespace: string | undefined, name: string): Promise<KObject> {
    let now: KObject | undefined;
    try {
      now = this.getNow(namespace, name);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return now ? Promise.resolve(now) : this.store.get(this.key(namespace, name)).then((found) => this.found(found, name));
  }

  private found(stored: StoredObject | undefined, name: string): KObject {
    if (!stored) throw errors.notFound(this.target(name));
    return stored.object;
  }

  /** `get`'s answer at once when the store can tell it (Store.readNow; the 404 thrown at once); undefined: call `get`. */
  getNow(namespace: string | undefined, name: string): KObject | undefined {
    const found = this.store.readNow?.(this.key(namespace, name));
    if (found === null) throw errors.notFound(this.target(name));
    return found?.object;
  }

  /** Refuses by rejecting, never by throwing. Waits only for the steps that have to (admission, the commit). */
  create(namespace: string | undefined, input: KObject, ctx: RequestContext, opts: WriteOptions): Promise<KObject> {
    try {
      const pending = prepareCreate(this.scope, opts.handOver ? input : cloneObject(input), namespace, ctx);
      // Before mutating admission, as upstream's field manager: what admission adds is nobody's.
      stampManager(this.scope, pending.obj, undefined, ctx, opts);
      const persist = (): Promise<KObject> => persistCreate(this.scope, pending, ctx, opts.dryRun);
      const admitting = admitCreate(this.scope, pending, ctx);
      return admitting ? admitting.then(persist) : persist();
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /**
   * Read-modify-write with compare-and-swap, retried when another writer got in between.
   * `change.tryUpdate` gets the current object (read-only) and returns the desired one; a
   * resourceVersion it carries is a precondition (409 on mismatch). Subresource writes never
   * create, even when `change.createIfMissing` is given.
   */
  async update(
    namespace: string | undefined,
    name: string,
    ctx: RequestContext,
    opts: WriteOptions,
    change: UpdateChange,
  ): Promise<{ object: KObject; created: boolean }> {
    const key = this.key(namespace, name);
    // As upstream's GuaranteedUpdate: a lost compare-and-swap is retried against the latest object
    // for as long as it takes (each loss means another write committed), so concurrent patches
    // without a resourceVersion all land; a stale resourceVersion the change carries is a 409.
    // Like upstream's, it starts from the store's cached copy when there is one (no read before the
    // write on etcd): the compare-and-swap catches a stale copy, and anything else a stale copy
    // decided (an error, nothing to change) is decided again on a read.
    let cached = opts.dryRun ? undefined : this.store.cached?.(key);
    for (let attempt = 1; ; attempt++) {
      const cachedCopy = cached !== undefined;
      const cur = cached ?? (await this.read(key));
      cached = undefined;
      if (!uidHolds(this.scope, { key, name, uid: change.uid, cur, cachedCopy })) continue;
      if (!cur) {
        if (change.createIfMissing && !opts.subresource) {
          return { object: await this.create(namespace, await change.createIfMissing(), ctx, opts), created: true };
        }
        throw errors.notFound(this.target(name));
      }
      const outcome = await this.updateOnce({ key, cur, cachedCopy, namespace, ctx, opts }, change);
      if (outcome === 'refresh') continue;
      if (outcome !== 'retry') return { object: outcome, created: false };
      // A lost compare-and-swap told the store the newer state; otherwise the winner may still be
      // committing (reads see committed state): give it the event loop.
      const newer = this.store.cached?.(key);
      if (newer && newer.revision > cur.revision) cached = newer;
      else await new Promise((resolve) => setTimeout(resolve, Math.min(attempt, 10)));
    }
  }

  /** One attempt on `attempt.cur`; 'refresh' when the change failed on a cached copy. */
  private async updateOnce(attempt: Omit<UpdateAttempt, 'next'>, change: UpdateChange): Promise<KObject | 'retry' | 'refresh'> {
    let desired: KObject;
    try {
      desired = await change.tryUpdate(attempt.cur.object);
    } catch (e) {
      if (attempt.cachedCopy) return 'refresh';
      throw e;
    }
    // The attempt changes `next` in place (server metadata, managedFields): a result that is not
    // fresh is copied, so a retry starts again from what the caller asked for.
    return writeUpdate(this.scope, { ...attempt, next: change.returnsFresh ? desired : cloneObject(desired) });
  }

  /**
   * Deletes an object, or starts graceful deletion when it has finalizers (deletionTimestamp is
   * set and the object stays until the last finalizer is removed). Preconditions and the
   * beforeDelete hook run again on every retry, against the object as it is then.
   */
  async delete(namespace: string | undefined, name: string, ctx: RequestContext, params: DeleteParams): Promise<DeleteResult> {
    const key = this.key(namespace, name);
    for (let attempt = 1; ; attempt++) {
      const cur = await this.store.get(key);
      if (!cur) throw errors.notFound(this.target(name));
      checkDeletePreconditions(this.scope, name, cur.object.metadata ?? {}, params);
      await this.env.hooks?.beforeDelete?.(cur.object, ctx);
      await this.env.admission?.validate({ operation: 'DELETE', info: this.info, subresource: '', namespace, name, object: cur.object, oldObject: cur.object, ctx });
      try {
        return await deleteOnce(this.scope, { key, cur, ctx, params });
      } catch (e) {
        if (!isRaceError(e) || attempt >= MAX_ATTEMPTS) throw e;
      }
    }
  }
}
