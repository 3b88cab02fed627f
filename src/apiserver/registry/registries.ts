/**
 * The built-in kinds and their registries: builds one GenericRegistry per served resource, wires
 * namespace lifecycle (existence checks on create, Terminating on delete), tells the server's own
 * controllers (controllers/: namespace finalizer, default ServiceAccount) of the writes they react
 * to, and creates the system namespaces on first start.
 */
import type { KObject } from '../../api/meta.js';
import { type ResourceInfo, type ResourceOf, parseApiVersion } from '../../api/resources.js';
import { isConflict } from '../../lib/api-errors.js';
import { errors, type Target } from '../http/errors.js';
import { type Store, storageKey } from '../storage/store.js';
import { csrStrategy } from './certificates/csr.js';
import { clusterTrustBundleStore, clusterTrustBundleStrategies } from './certificates/cluster-trust-bundle.js';
import { podCertificateRequestStore, podCertificateRequestStrategies } from './certificates/pod-certificate-request.js';
import { configMapStrategy } from './core/configmap.js';
import { controllerRevisionStrategy } from './apps/controller-revision.js';
import { coreEventStrategy } from './core/event.js';
import { eventsV1Store, eventsV1Strategy } from './events/event.js';
import { migrateEventsV1Storage } from './events/migrate.js';
import { GenericRegistry, type RegistryHooks } from './generic/registry.js';
import { leaseStrategy } from './coordination/lease.js';
import { SYSTEM_NAMESPACES, checkNamespaceDeletable, namespaceStrategy, terminateNamespace } from './core/namespace.js';
import { nodeStrategy } from './core/node.js';
import { podStrategy } from './core/pod.js';
import { podBinding } from './core/pod-binding.js';
import { reconcileDefault } from './rbac/reconcile-defaults.js';
import { secretStrategy } from './core/secret.js';
import { DEFAULT_SERVICE_RANGE, type ServiceRange } from '../../lib/service-range.js';
import { serviceStrategy } from './core/service.js';
import { serviceAccountStrategy } from './core/service-account.js';
import type { Admission } from './generic/admission.js';
import type { RequestContext, Strategy } from './generic/strategy.js';
import type { ObjectReader } from '../authentication/types.js';
import type { StoredResource } from '../http/storage-metrics.js';

/** Every built-in kind; access control adds RBAC, the reviews and the ServiceAccount token subresource. */
const builtinStrategies = (serviceRange: ServiceRange, store: Store): readonly Strategy[] => [
  namespaceStrategy,
  serviceAccountStrategy,
  secretStrategy,
  configMapStrategy,
  serviceStrategy(serviceRange),
  // pods/binding writes the pod in storage itself, around the strategy's update rules.
  { ...podStrategy, virtualSubresources: { binding: podBinding(store) } },
  nodeStrategy,
  coreEventStrategy,
  eventsV1Strategy,
  leaseStrategy,
  controllerRevisionStrategy,
  csrStrategy,
  ...clusterTrustBundleStrategies,
  ...podCertificateRequestStrategies,
];

/**
 * A controller inside the server that reacts to writes as the registries make them (upstream's run
 * in kube-controller-manager off informers; here they act before the write's response).
 */
export interface RegistryObserver {
  namespaceCreated?(ns: KObject): void | Promise<void>;
  /** A namespace's deletion marked it Terminating. */
  namespaceTerminating?(ns: KObject): void | Promise<void>;
  /** A namespaced object was deleted. */
  deleted?(obj: KObject, info: ResourceInfo): void | Promise<void>;
  /** Runs in `start`, before the system namespaces are made. */
  start?(): Promise<void>;
  stop?(): void;
}

export interface Registries {
  find(group: string, version: string, plural: string): GenericRegistry | undefined;
  all(): Iterable<GenericRegistry>;
  /** Adds the server's own controllers; each is told of the writes in the order added. */
  observe(...observers: RegistryObserver[]): void;
  /** The kinds kept in the store (not the computed ones: reviews, token requests), with their object counts. */
  storedResources(): StoredResource[];
  readonly reader: ObjectReader;
  /** Creates the system namespaces (and their default ServiceAccounts) and `objects` when missing; reconciles stored RBAC defaults. */
  start(objects: readonly KObject[]): Promise<void>;
  /** Stops the observers' background work. */
  close(): void;
  /** The context of writes the server makes on its own behalf (its internal controllers). */
  systemContext(): RequestContext;
}

const idOf = (i: { group: string; version: string; plural: string }): string => `${i.group}/${i.version}/${i.plural}`;

/** The context of writes the server makes on its own behalf. */
function systemContext(reader: ObjectReader): RequestContext {
  return {
    user: { username: 'system:apiserver', groups: ['system:masters'] },
    now: new Date(),
    dryRun: false,
    authorizer: { authorize: async () => ({ allowed: true }) },
    objects: reader,
    warnings: [],
  };
}

async function ignoreExists(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
}

/** How many objects a registry's storage holds (counted by the store, no value read). */
function countObjects(registry: GenericRegistry): Promise<number> {
  return registry.store.count(registry.prefix(undefined));
}

/**
 * Reads stored objects straight from the store (access control needs one before the server runs).
 * A resource's keys hold only objects of its kind that its schema and strategy accepted, so they are
 * returned as the type the resource names: the one place a stored object gets its type.
 */
export function objectReader(store: Store): ObjectReader {
  const readNow = store.readNow?.bind(store);
  return {
    async get<T extends KObject>(info: ResourceOf<T>, namespace: string | undefined, name: string) {
      const found = await store.get(storageKey(info.group, info.plural, info.namespaced ? namespace : undefined, name));
      return found?.object as T | undefined;
    },
    ...(readNow && {
      readNow<T extends KObject>(info: ResourceOf<T>, namespace: string | undefined, name: string): T | null | undefined {
        const found = readNow(storageKey(info.group, info.plural, info.namespaced ? namespace : undefined, name));
        return found && (found.object as T);
      },
    }),
    async list<T extends KObject>(info: ResourceOf<T>, namespace: string | undefined) {
      const res = await store.range({ prefix: storageKey(info.group, info.plural, info.namespaced ? namespace : undefined) });
      return res.items.map((i) => i.object as T);
    },
  };
}

export function buildRegistries(store: Store, extra: readonly Strategy[], admission?: Admission, serviceRange = DEFAULT_SERVICE_RANGE): Registries {
  const strategies = new Map<string, Strategy>();
  for (const s of [...builtinStrategies(serviceRange, store), ...extra]) strategies.set(idOf(s.info), s);
  const registries = new Map<string, GenericRegistry>();
  const reader = objectReader(store);

  const admitInto = (ns: KObject | undefined, namespace: string, target: Target): void => {
    if (!ns) throw errors.notFound({ group: '', resource: 'namespaces', name: namespace });
    if (ns.metadata?.deletionTimestamp) {
      throw errors.admissionForbidden(target, `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  };
  // Read without waiting when the store can (its index): a create then costs no turn for it.
  const checkNamespace = (namespace: string, target: Target): Promise<void> | undefined => {
    const key = storageKey('', 'namespaces', undefined, namespace);
    const now = store.readNow?.(key);
    if (now === undefined) return store.get(key).then((found) => admitInto(found?.object, namespace, target));
    admitInto(now?.object, namespace, target);
    return undefined;
  };

  const observers: RegistryObserver[] = [];
  const namespaceHooks: RegistryHooks = {
    afterCreate: async (ns) => {
      for (const o of observers) await o.namespaceCreated?.(ns);
    },
    beforeDelete: async (ns) => checkNamespaceDeletable(ns),
    terminate: (ns, ctx) => terminateNamespace(ns, ctx.now),
    afterTerminate: async (ns) => {
      for (const o of observers) await o.namespaceTerminating?.(ns);
    },
  };
  const contentHooks = (info: ResourceInfo): RegistryHooks => ({
    afterDelete: async (obj) => {
      for (const o of observers) await o.deleted?.(obj, info);
    },
  });

  for (const [id, strategy] of strategies) {
    const isNamespace = strategy.info.plural === 'namespaces' && strategy.info.group === '';
    const hooks = isNamespace ? namespaceHooks : strategy.info.namespaced ? contentHooks(strategy.info) : undefined;
    // events.k8s.io/v1 Events are the core/v1 Events seen in another version.
    const own =
      id === idOf(eventsV1Strategy.info)
        ? eventsV1Store(store)
        : clusterTrustBundleStrategies.includes(strategy)
          ? clusterTrustBundleStore(store, strategy.info)
          : podCertificateRequestStrategies.includes(strategy)
            ? podCertificateRequestStore(store, strategy.info)
            : store;
    registries.set(id, new GenericRegistry(strategy, { store: own, checkNamespace, hooks, admission }));
  }

  // Every request finds its registry: by group, version, then plural, with no key string built.
  const byResource = new Map<string, Map<string, Map<string, GenericRegistry>>>();
  for (const r of registries.values()) {
    const { group, version, plural } = r.info;
    const versions = byResource.get(group) ?? new Map<string, Map<string, GenericRegistry>>();
    byResource.set(group, versions);
    const plurals = versions.get(version) ?? new Map<string, GenericRegistry>();
    versions.set(version, plurals);
    plurals.set(plural, r);
  }

  return {
    find: (group, version, plural) => byResource.get(group)?.get(version)?.get(plural),
    storedResources: () =>
      [...registries.values()]
        .filter((r) => !r.strategy.virtual)
        .map((r) => ({ info: r.info, count: () => countObjects(r) })),
    all: () => registries.values(),
    observe: (...added) => void observers.push(...added),
    reader,
    close: () => observers.forEach((o) => o.stop?.()),
    systemContext: () => systemContext(reader),
    async start(objects) {
      await migrateEventsV1Storage(store);
      for (const o of observers) await o.start?.();
      const ctx = systemContext(reader);
      const namespaces = SYSTEM_NAMESPACES.map((name): KObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
      for (const obj of [...namespaces, ...objects]) {
        const { group, version } = parseApiVersion(obj.apiVersion ?? '');
        const registry = [...registries.values()].find((r) => r.info.group === group && r.info.version === version && r.info.kind === obj.kind);
        if (!registry) throw new Error(`no registry for default object ${obj.apiVersion}/${obj.kind}`);
        const namespace = registry.info.namespaced ? obj.metadata?.namespace : undefined;
        const name = obj.metadata?.name ?? '';
        const existing = await reader.get(registry.info, namespace, name);
        if (!existing) {
          await ignoreExists(registry.create(namespace, obj, ctx, { dryRun: false, fieldManager: 'kube-identity' }));
          continue;
        }
        const reconciled = reconcileDefault(existing, obj);
        // A conflict means someone else wrote it meanwhile: the next start reconciles again.
        if (reconciled) await ignoreExists(registry.update(namespace, name, ctx, { dryRun: false, fieldManager: 'kube-identity' }, { tryUpdate: () => reconciled }));
      }
    },
  };
}
