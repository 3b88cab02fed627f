/**
 * kube-controller-manager's clusterrole-aggregation controller, run inside the server: a ClusterRole
 * with an `aggregationRule` gets as its rules those of every other ClusterRole its selectors match
 * (in name order, each distinct rule once), and keeps them as those roles change. It is level-triggered:
 * any ClusterRole event re-derives every aggregated role from the store, so a missed or coalesced event
 * costs nothing, and a write that loses a race (409) is simply redone on the next pass.
 */
import type { KObject } from '../../api/meta.js';
import { deepEqual } from '../../lib/json-value.js';
import { isRecord } from '../../lib/json.js';
import type { Logger } from '../../log/logger.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { RequestContext } from '../registry/generic/strategy.js';
import { labelSelectorMatches } from '../selectors/label-selector-object.js';
import { type Store, type WatchHandle, storageKey } from '../storage/store.js';

const PREFIX = storageKey('rbac.authorization.k8s.io', 'clusterroles', undefined);
const FIELD_MANAGER = 'clusterrole-aggregation-controller';
/** Aggregated roles may feed each other (view → edit → admin); a chain settles within a few passes. */
const MAX_PASSES = 5;
/** Wait before listing again when the store failed (etcd down): no failure ends the controller. */
const RETRY_MS = 1000;

function selectorsOf(role: KObject): unknown[] {
  const rule = role.aggregationRule;
  return isRecord(rule) && Array.isArray(rule.clusterRoleSelectors) ? rule.clusterRoleSelectors : [];
}

/** The rules `role` should hold, given every ClusterRole (undefined when it aggregates nothing). */
export function aggregatedRules(role: KObject, all: readonly KObject[]): unknown[] | undefined {
  const selectors = selectorsOf(role);
  if (selectors.length === 0) return undefined;
  const name = role.metadata?.name;
  const sources = all
    .filter((r) => r.metadata?.name !== name && selectors.some((s) => labelSelectorMatches(s, r.metadata?.labels)))
    .sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  const rules: unknown[] = [];
  for (const source of sources) {
    for (const rule of Array.isArray(source.rules) ? source.rules : []) {
      if (!rules.some((r) => deepEqual(r, rule))) rules.push(rule);
    }
  }
  return rules;
}

export interface ClusterRoleAggregationOptions {
  store: Store;
  clusterRoles: GenericRegistry;
  context: () => RequestContext;
  logger: Logger;
}

export class ClusterRoleAggregation {
  private watch: WatchHandle | undefined;
  private running: Promise<void> | undefined;
  private dirty = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ClusterRoleAggregationOptions) {}

  /** Aggregates once, then follows every ClusterRole change. */
  async start(): Promise<void> {
    const revision = await this.pass();
    if (!this.stopped) this.follow(revision);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.watch?.stop();
  }

  /** Resolves when no pass is running or queued (tests wait on it). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private follow(fromRevision: number): void {
    this.watch = this.opts.store.watch(PREFIX, {
      fromRevision,
      onEvent: () => this.schedule(),
      // The history we resumed from is gone, or the store failed: start over from a fresh list.
      onError: () => this.restart(),
    });
  }

  private restart(): void {
    if (this.stopped) return;
    this.start().catch((err: unknown) => this.retryLater(err, () => this.restart()));
  }

  private retryLater(err: unknown, again: () => void): void {
    this.opts.logger.warn({ err }, 'clusterrole aggregation failed, retrying');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(again, RETRY_MS);
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = (async () => {
      try {
        do {
          this.dirty = false;
          await this.pass();
        } while (this.dirty && !this.stopped);
      } catch (err) {
        this.retryLater(err, () => this.schedule());
      } finally {
        this.running = undefined;
      }
    })();
  }

  /** Brings every aggregated role up to date; returns the revision the list was read at. */
  private async pass(): Promise<number> {
    let revision = 0;
    for (let i = 0; i < MAX_PASSES && !this.stopped; i++) {
      const listed = await this.opts.store.range({ prefix: PREFIX });
      revision = listed.revision;
      const all = listed.items.map((item) => item.object);
      let changed = false;
      for (const role of all) changed = (await this.reconcile(role, all)) || changed;
      if (!changed) break;
    }
    return revision;
  }

  private async reconcile(role: KObject, all: readonly KObject[]): Promise<boolean> {
    const rules = aggregatedRules(role, all);
    if (rules === undefined || deepEqual(rules, role.rules ?? [])) return false;
    const name = role.metadata?.name ?? '';
    try {
      await this.opts.clusterRoles.update(undefined, name, this.opts.context(), { dryRun: false, fieldManager: FIELD_MANAGER }, {
        tryUpdate: (current) => ({ ...current, rules: aggregatedRules(current, all) ?? current.rules }),
      });
      return true;
    } catch (err) {
      // Conflicts and deletions are settled by the event that caused them.
      this.opts.logger.debug({ err, clusterRole: name }, 'aggregating cluster role failed');
      return false;
    }
  }
}
