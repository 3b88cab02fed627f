/**
 * The shapes shared by the generic registry and its create, update and delete steps. They live
 * apart from the GenericRegistry class so the step modules can use them without importing it.
 */
import type { KObject } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import type { Target } from '../../http/errors.js';
import type { Store } from '../../storage/store.js';
import type { Admission } from './admission.js';
import type { RequestContext, Strategy } from './strategy.js';

export const MODIFIED_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

/** How often a write is retried after losing a compare-and-swap race before giving up. */
export const MAX_ATTEMPTS = 8;

/** ListOptions (meta.k8s.io) of a list or watch, as the handlers parse them from the query. */
export interface ListOptions {
  labelSelector: string;
  fieldSelector: string;
  limit: number;
  continue: string;
  resourceVersion: string;
  resourceVersionMatch: string;
  allowWatchBookmarks: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

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
  /**
   * NamespaceLifecycle admission for namespaced creates: 404 when missing, 403 when terminating.
   * Throws at once when it can tell without waiting, and returns a promise only when it has to.
   */
  checkNamespace?(namespace: string, target: Target): Promise<void> | undefined;
  hooks?: RegistryHooks;
  /** The admission chain (admission/chain.ts), run after the kind's own admission. */
  admission?: Admission;
}

export interface WriteOptions {
  dryRun: boolean;
  fieldManager?: string;
  userAgent?: string;
  subresource?: string;
  /** A server-side apply: the patch already recorded the applier's managedFields entry. */
  apply?: boolean;
  /**
   * The object given to create is handed over: the caller built it for this request (a decoded
   * body) and keeps no reference, so the registry changes and stores it instead of a copy.
   */
  handOver?: boolean;
}

export interface DeleteParams {
  dryRun: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

/**
 * What an update changes. `tryUpdate` gets the stored object, which it must not change (stored
 * objects are shared with readers and watchers), and returns the desired one; `createIfMissing`
 * supplies the object to create when there is none (PUT with allowCreateOnUpdate, server-side apply).
 */
export interface UpdateChange {
  tryUpdate(current: KObject): KObject | Promise<KObject>;
  /**
   * `tryUpdate` returns a new object on every call, sharing nothing with its argument or earlier
   * results (a patch applied to a copy), so the update may change it in place instead of copying it.
   */
  returnsFresh?: boolean;
  createIfMissing?: () => KObject | Promise<KObject>;
  /** The uid a PUT's body names: the stored object must have it, or be missing (upstream's UpdatedObjectInfo.Preconditions). */
  uid?: string;
}

/**
 * The slice of a registry its write steps need. Passed explicitly so the steps stay plain
 * functions that can be read (and reasoned about) one at a time.
 */
export interface RegistryScope {
  readonly info: ResourceInfo;
  readonly strategy: Strategy;
  readonly env: RegistryEnv;
  key(namespace: string | undefined, name: string): string;
  target(name?: string): Target;
}
