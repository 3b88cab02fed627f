/**
 * In-process watch fan-out. Writes enqueue their event on every matching watcher and delivery
 * happens later in one microtask, so a callback never runs inside `watch()` or inside a write
 * call, and a callback that writes cannot overtake events already queued: each watcher sees its
 * events exactly once, in revision order (etcd's Ordered/Unique/Reliable guarantees).
 */
import type { StoreError, StoreEvent, WatchHandle, WatchOptions } from './store.js';

interface Watcher {
  prefix: string;
  options: WatchOptions;
  queue: StoreEvent[];
  error?: StoreError;
  stopped: boolean;
}

export class WatchHub {
  private readonly watchers = new Set<Watcher>();
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
      this.watchers.add(watcher);
    } else {
      watcher.error = backlog;
    }
    if (watcher.queue.length > 0 || watcher.error) this.schedule(watcher);
    return {
      stop: () => {
        watcher.stopped = true;
        watcher.queue.length = 0;
        this.watchers.delete(watcher);
        this.pending.delete(watcher);
      },
    };
  }

  /** Queues a committed event for every watcher whose prefix matches. */
  publish(event: StoreEvent): void {
    for (const watcher of this.watchers) {
      if (!event.key.startsWith(watcher.prefix) || event.revision <= watcher.options.fromRevision) continue;
      watcher.queue.push(event);
      this.schedule(watcher);
    }
  }

  /** Stops every watcher (store closing); queued events are dropped. */
  stopAll(): void {
    for (const watcher of this.watchers) {
      watcher.stopped = true;
      watcher.queue.length = 0;
    }
    this.watchers.clear();
    this.pending.clear();
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
        this.watchers.delete(watcher);
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
