/**
 * The namespace controller's deletion work, run inside the server (no controller-manager here):
 * once a namespace is Terminating, delete everything in it through the registries (so content
 * finalizers hold it, as upstream), then drop the `kubernetes` spec finalizer and delete the
 * namespace. Content still held by finalizers leaves the namespace Terminating; the deletion
 * that finally removes such content runs the work again.
 */
import type { KObject } from '../../api/meta.js';
import { isStored } from '../../api/resources.js';
import { isNotFound } from '../../lib/api-errors.js';
import { isStoreError, type Store, storageKey } from '../storage/store.js';
import { withoutKubernetesFinalizer } from '../registry/core/namespace.js';
import type { RegistryObserver, Registries } from '../registry/registries.js';
import { deepEqual } from '../../lib/json-value.js';
import type { RequestContext } from '../registry/generic/strategy.js';
import type { GenericRegistry } from '../registry/generic/registry.js';

/** Passes over the contents before giving up until the next trigger (creates racing the mark). */
const MAX_PASSES = 5;
/**
 * How often Terminating namespaces are looked at again. Several API servers may share the store:
 * the content that held a namespace may go through another replica, whose deletions this one's
 * hooks never see, and the replica that started the work may have stopped. Upstream's namespace
 * controller likewise requeues a namespace while content remains.
 */
export const NAMESPACE_RESYNC_MS = 5000;

export class NamespaceFinalizer implements RegistryObserver {
  /** Namespaces being finalized, with whether another pass was asked for meanwhile. */
  private readonly running = new Map<string, boolean>();
  /** Terminating namespaces whose content deletions should trigger another pass. */
  private readonly terminating = new Set<string>();
  private resyncTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly registries: Registries,
  ) {}

  namespaceTerminating(ns: KObject): void {
    this.finalize(ns.metadata?.name ?? '');
  }

  /** Starts (or re-runs) the work for a namespace in the background; failures wait for the next trigger. */
  finalize(name: string): void {
    this.terminating.add(name);
    if (this.running.has(name)) {
      this.running.set(name, true);
      return;
    }
    this.running.set(name, true);
    void (async () => {
      try {
        for (let pass = 0; this.running.get(name) === true && pass < MAX_PASSES; pass++) {
          this.running.set(name, false);
          if (await this.pass(name)) this.running.set(name, true);
        }
      } catch {
        // Left Terminating: the next deletion in the namespace, or a restart, tries again.
      } finally {
        this.running.delete(name);
      }
    })();
  }

  /** Called after any namespaced object is deleted: content leaving a terminating namespace. */
  deleted(obj: KObject): void {
    const ns = obj.metadata?.namespace;
    if (ns && this.terminating.has(ns)) this.finalize(ns);
  }

  /** Resumes the namespaces left Terminating now, then every NAMESPACE_RESYNC_MS until `stop`. */
  async start(): Promise<void> {
    await this.resume();
    const tick = (): void => {
      void this.resume()
        .catch(() => undefined)
        .finally(() => {
          if (this.resyncTimer) this.resyncTimer = setTimeout(tick, NAMESPACE_RESYNC_MS).unref();
        });
    };
    this.resyncTimer = setTimeout(tick, NAMESPACE_RESYNC_MS).unref();
  }

  stop(): void {
    clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
  }

  /** Takes up every Terminating namespace (left by a previous run or another replica). */
  private async resume(): Promise<void> {
    const res = await this.store.range({ prefix: storageKey('', 'namespaces', undefined) });
    for (const item of res.items) {
      if (item.object.metadata?.deletionTimestamp) this.finalize(item.object.metadata.name ?? '');
    }
  }

  /** One pass; true when content without a deletionTimestamp remains (created meanwhile). */
  private async pass(name: string): Promise<boolean> {
    const key = storageKey('', 'namespaces', undefined, name);
    const ns = await this.store.get(key);
    if (!ns?.object.metadata?.deletionTimestamp) {
      this.terminating.delete(name);
      return false;
    }
    const ctx = this.registries.systemContext();
    const { held, live } = await this.deleteContents(name, ctx);
    if (held || live) return live;
    await this.dropFinalizer(key);
    await this.registries.find('', 'v1', 'namespaces')?.delete(undefined, name, ctx, { dryRun: false });
    this.terminating.delete(name);
    return false;
  }

  /**
   * Deletes every stored object in the namespace: whether finalizers hold some, and whether live ones
   * remain. Pods go first and alone (OrderedNamespaceDeletion, GA in 1.34): while any pod remains, the
   * rest (the Secrets, ConfigMaps, ServiceAccounts and RBAC a running workload relies on) stays.
   */
  private async deleteContents(name: string, ctx: RequestContext): Promise<{ held: boolean; live: boolean }> {
    const contents = [...this.registries.all()].filter((reg) => reg.info.namespaced && isStored(reg.info));
    const isPods = (reg: GenericRegistry): boolean => reg.info.group === '' && reg.info.plural === 'pods';
    const pods = await this.deleteAll(name, ctx, contents.filter(isPods));
    if (pods.held || pods.live || pods.remaining) return pods;
    return this.deleteAll(name, ctx, contents.filter((reg) => !isPods(reg)));
  }

  private async deleteAll(name: string, ctx: RequestContext, registries: readonly GenericRegistry[]): Promise<{ held: boolean; live: boolean; remaining: boolean }> {
    let held = false;
    let live = false;
    let remaining = false;
    for (const reg of registries) {
      const res = await this.store.range({ prefix: reg.prefix(name) });
      for (const item of res.items) {
        try {
          held ||= !(await reg.delete(name, item.object.metadata?.name ?? '', ctx, { dryRun: false })).deleted;
        } catch (e) {
          // 404: removed meanwhile (or the same object seen through another version).
          if (!isNotFound(e)) throw e;
        }
      }
      const left = await this.store.range({ prefix: reg.prefix(name) });
      live ||= left.items.some((i) => !i.object.metadata?.deletionTimestamp);
      remaining ||= left.items.length > 0;
    }
    return { held, live, remaining };
  }

  /** Upstream's `PUT /api/v1/namespaces/<n>/finalize` without the `kubernetes` entry. */
  private async dropFinalizer(key: string): Promise<void> {
    for (;;) {
      const cur = await this.store.get(key);
      if (!cur) return;
      const next = withoutKubernetesFinalizer(cur.object);
      if (deepEqual(next, cur.object)) return;
      try {
        await this.store.update(key, next, cur.revision);
        return;
      } catch (e) {
        if (!isStoreError(e, 'Conflict')) throw e;
      }
    }
  }
}
