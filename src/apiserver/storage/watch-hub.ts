/**
 * In-process watch fan-out. Writes enqueue their event on every matching watcher and delivery
 * happens later in one microtask, so a callback never runs inside `watch()` or inside a write
 * call, and a callback that writes cannot overtake events already queued: each watcher sees its
 * events exactly once, in revision order (etcd's Ordered/Unique/Reliable guarantees).
 *
 * Watchers are grouped by prefix, and within a prefix by trigger (WatchOptions.trigger): a write
 * tests each distinct prefix once, and reaches the watchers of its object's name or node only, so
 * 5,000 kubelets each watching their own Node and pods do not each test every Lease renewal or
 * every other node's writes.
 */
import type { KObject } from '../../api/meta.js';
import type { StoreError, StoreEvent, WatchHandle, WatchOptions } from './store.js';

interface Watcher {
  prefix: string;
  options: WatchOptions;
  queue: StoreEvent[];
  error?: StoreError;
  stopped: boolean;
}

/** The watchers of one prefix: those without a trigger, and those by the value they wait for. */
interface PrefixGroup {
  all: Set<Watcher>;
  byName: Map<string, Set<Watcher>>;
  byNodeName: Map<string, Set<Watcher>>;
}

/** A pod's node, as field selectors read it (absent reads as the empty string). */
function nodeNameOf(obj: KObject | undefined): string {
  const spec = (obj as { spec?: { nodeName?: unknown } } | undefined)?.spec;
  return typeof spec?.nodeName === 'string' ? spec.nodeName : '';
}

export class WatchHub {
  private readonly groups = new Map<string, PrefixGroup>();
  private readonly pending = new Set<Watcher>();
  private scheduled = false;

  /**
   * Registers a watcher that first receives `backlog` (the history after its start revision),
   * or only `error` when its start revision cannot be served.
   */
  add(prefix: string, options: WatchOptions, backlog: StoreEvent[] | StoreError): WatchHandle {
    const watcher: Watcher = { prefix, options, queue: [], stopped: false };
    if (Array.isArray(backlog)) {
      watcher.queue.push(...backlog);
      this.setOf(watcher, true)?.add(watcher);
    } else {
      watcher.error = backlog;
    }
    if (watcher.queue.length > 0 || watcher.error) this.schedule(watcher);
    return {
      stop: () => {
        watcher.stopped = true;
        watcher.queue.length = 0;
        this.remove(watcher);
        this.pending.delete(watcher);
      },
    };
  }

  /** Queues a committed event for every watcher whose prefix (and trigger) matches. */
  publish(event: StoreEvent): void {
    for (const [prefix, group] of this.groups) {
      if (!event.key.startsWith(prefix)) continue;
      this.offer(group.all, event);
      if (group.byName.size > 0) this.offer(group.byName.get(event.object.metadata?.name ?? ''), event);
      if (group.byNodeName.size > 0) {
        const now = nodeNameOf(event.object);
        this.offer(group.byNodeName.get(now), event);
        // A pod leaving a node is seen by that node's watchers too (as DELETED, once filtered).
        const before = nodeNameOf(event.prevObject);
        if (event.prevObject && before !== now) this.offer(group.byNodeName.get(before), event);
      }
    }
  }

  /** Stops every watcher (store closing); queued events are dropped. */
  stopAll(): void {
    for (const group of this.groups.values()) {
      for (const set of [group.all, ...group.byName.values(), ...group.byNodeName.values()]) {
        for (const watcher of set) {
          watcher.stopped = true;
          watcher.queue.length = 0;
        }
      }
    }
    this.groups.clear();
    this.pending.clear();
  }

  private offer(watchers: Set<Watcher> | undefined, event: StoreEvent): void {
    if (!watchers) return;
    for (const watcher of watchers) {
      if (event.revision <= watcher.options.fromRevision) continue;
      watcher.queue.push(event);
      this.schedule(watcher);
    }
  }

  /** The set a watcher belongs in, created when `create` says so. */
  private setOf(watcher: Watcher, create: boolean): Set<Watcher> | undefined {
    let group = this.groups.get(watcher.prefix);
    if (!group) {
      if (!create) return undefined;
      group = { all: new Set(), byName: new Map(), byNodeName: new Map() };
      this.groups.set(watcher.prefix, group);
    }
    const trigger = watcher.options.trigger;
    if (!trigger) return group.all;
    const index = trigger.field === 'metadata.name' ? group.byName : group.byNodeName;
    let set = index.get(trigger.value);
    if (!set && create) index.set(trigger.value, (set = new Set()));
    return set;
  }

  private remove(watcher: Watcher): void {
    const set = this.setOf(watcher, false);
    if (!set?.delete(watcher) || set.size > 0) return;
    const group = this.groups.get(watcher.prefix);
    const trigger = watcher.options.trigger;
    if (!group) return;
    if (trigger) (trigger.field === 'metadata.name' ? group.byName : group.byNodeName).delete(trigger.value);
    if (group.all.size === 0 && group.byName.size === 0 && group.byNodeName.size === 0) this.groups.delete(watcher.prefix);
  }

  private schedule(watcher: Watcher): void {
    this.pending.add(watcher);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  /**
   * Drains every pending watcher. A callback that throws is a caller bug: that watcher is stopped
   * (it would otherwise miss an event), the others are still served, and the error is rethrown.
   */
  private flush(): void {
    this.scheduled = false;
    let failure: { error: unknown } | undefined;
    // A Set iterates entries added during iteration, so watchers re-queued by callbacks are served too.
    for (const watcher of this.pending) {
      this.pending.delete(watcher);
      try {
        this.drain(watcher);
      } catch (error) {
        this.remove(watcher);
        watcher.stopped = true;
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  private drain(watcher: Watcher): void {
    let next = 0;
    try {
      while (!watcher.stopped && next < watcher.queue.length) watcher.options.onEvent(watcher.queue[next++]!);
    } finally {
      watcher.queue.splice(0, next);
    }
    if (watcher.error && !watcher.stopped) {
      watcher.stopped = true;
      watcher.options.onError?.(watcher.error);
    }
  }
}
