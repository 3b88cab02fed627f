/**
 * kube-controller-manager's root-ca-cert-publisher, run inside the server: every namespace holds a
 * ConfigMap `kube-root-ca.crt` whose `ca.crt` is the bundle that verifies this API server's serving
 * certificate (what a pod's projected service account volume mounts beside its token). It is made
 * when a namespace is, put back when deleted, and its data restored when someone changes it.
 * Level-triggered: an event only names a namespace to look at, and the look decides from the store.
 */
import type { KObject } from '../../api/meta.js';
import { deepEqual } from '../../lib/json-value.js';
import { isRecord } from '../../lib/json.js';
import type { Logger } from '../../log/logger.js';
import { isConflict, isForbidden, isInvalid, isNotFound } from '../../lib/api-errors.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { RequestContext } from '../registry/generic/strategy.js';
import { type Store, type StoreEvent, type WatchHandle, storageKey } from '../storage/store.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
/** The annotation's text as kube-controller-manager writes it: clients may show it. */
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';
const FIELD_MANAGER = 'kube-controller-manager';
const NAMESPACES = storageKey('', 'namespaces', undefined);
const CONFIGMAPS = storageKey('', 'configmaps', undefined);
const RETRY_MS = 1000;

export interface RootCaPublisherOptions {
  store: Store;
  configMaps: GenericRegistry;
  context: () => RequestContext;
  logger: Logger;
  /** PEM bundle that verifies the API server. */
  caPem: string;
}

/** Whether `cm` already says what the publisher would write (extra keys in `data` are not). */
function published(cm: KObject, caPem: string): boolean {
  const annotations = cm.metadata?.annotations;
  return deepEqual(cm.data, { 'ca.crt': caPem }) && typeof annotations?.[DESCRIPTION_ANNOTATION] === 'string' && annotations[DESCRIPTION_ANNOTATION] !== '';
}

export class RootCaPublisher {
  private watches: WatchHandle[] = [];
  private readonly queue = new Set<string>();
  private readonly failed = new Set<string>();
  private draining: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly opts: RootCaPublisherOptions) {}

  /** Publishes into every namespace once, then follows namespaces and the published ConfigMaps. */
  async start(): Promise<void> {
    const listed = await this.opts.store.range({ prefix: NAMESPACES });
    for (const item of listed.items) this.enqueue(item.object.metadata?.name);
    if (this.stopped) return;
    this.watches = [NAMESPACES, CONFIGMAPS].map((prefix) =>
      this.opts.store.watch(prefix, {
        fromRevision: listed.revision,
        onEvent: (e) => this.enqueue(this.namespaceOf(e)),
        // The history we resumed from is gone: start over from a fresh list.
        onError: () => this.restart(),
      }),
    );
    await this.idle();
  }

  /** Stops; resolves once a publish under way has ended, so the store can be closed after it. */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    clearTimeout(this.restartTimer);
    for (const w of this.watches) w.stop();
    return this.draining ?? Promise.resolve();
  }

  /** Resolves when nothing is queued or being published (tests wait on it). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Lists and watches again; while the store cannot list, tries again every RETRY_MS. */
  private restart(): void {
    if (this.stopped || this.restartTimer) return;
    for (const w of this.watches) w.stop();
    this.watches = [];
    this.start().catch((err: unknown) => {
      this.opts.logger.warn({ err }, 'cannot restart the root CA publisher');
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        this.restart();
      }, RETRY_MS);
    });
  }

  /** The namespace an event asks us to look at, as upstream's handlers choose. */
  private namespaceOf(e: StoreEvent): string | undefined {
    const meta = e.object.metadata;
    if (e.key.startsWith(NAMESPACES)) {
      if (e.type === 'DELETED') return undefined;
      const phase = isRecord(e.object.status) ? e.object.status.phase : undefined;
      return e.type === 'ADDED' || phase === 'Active' ? meta?.name : undefined;
    }
    return meta?.name === ROOT_CA_CONFIGMAP && e.type !== 'ADDED' ? meta.namespace : undefined;
  }

  private enqueue(namespace: string | undefined): void {
    if (!namespace || this.stopped) return;
    this.queue.add(namespace);
    this.draining ??= this.drain();
  }

  private async drain(): Promise<void> {
    for (const namespace of this.queue) {
      this.queue.delete(namespace);
      if (this.stopped) break;
      try {
        await this.sync(namespace);
      } catch (err) {
        this.opts.logger.warn({ err, namespace }, 'cannot publish the root CA');
        this.retryLater(namespace);
      }
    }
    // Cleared in the same step as the loop's last check, so a later enqueue starts a new drain.
    this.draining = undefined;
  }

  private retryLater(namespace: string): void {
    this.failed.add(namespace);
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      const failed = [...this.failed];
      this.failed.clear();
      for (const ns of failed) this.enqueue(ns);
    }, RETRY_MS);
    this.retry.unref();
  }

  private async sync(namespace: string): Promise<void> {
    const ns = await this.opts.store.get(storageKey('', 'namespaces', undefined, namespace));
    if (!ns || ns.object.metadata?.deletionTimestamp) return;
    const current = await this.opts.store.get(storageKey('', 'configmaps', namespace, ROOT_CA_CONFIGMAP));
    if (current && published(current.object, this.opts.caPem)) return;
    const data = { 'ca.crt': this.opts.caPem };
    try {
      await this.opts.configMaps.update(namespace, ROOT_CA_CONFIGMAP, this.opts.context(), { dryRun: false, fieldManager: FIELD_MANAGER }, {
        createIfMissing: () => ({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } },
          data,
        }),
        tryUpdate: (cm) => {
          if (published(cm, this.opts.caPem)) return cm;
          const annotations = { ...cm.metadata?.annotations, [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION };
          return { ...cm, metadata: { ...cm.metadata, annotations }, data };
        },
      });
    } catch (err) {
      // The namespace went away or began terminating meanwhile, or another replica made it first.
      if (isForbidden(err) || isNotFound(err) || isConflict(err)) return;
      // Someone made it immutable: retrying cannot help until it changes again.
      if (isInvalid(err)) {
        this.opts.logger.warn({ err, namespace }, 'cannot restore the root CA ConfigMap');
        return;
      }
      throw err;
    }
  }
}
