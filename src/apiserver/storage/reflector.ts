/**
 * Keeps an in-memory copy of one key prefix current, as client-go's reflector keeps an informer's
 * store, but over the `Store` itself for the API server's own caches (the RBAC index, the
 * bootstrap-token Secrets): one range of the prefix, then a watch from the range's revision. A watch
 * that ends is relisted: at once after Compacted (the history it needs is gone, so only a list can
 * catch up), a second later after any other failure, as is a failed list; a relist replaces the
 * whole copy, so writes missed meanwhile are never lost. `synced` says whether the copy follows the
 * store now: false before the first list, while a relist is pending, and after `stop`.
 */
import type { Store, StoredObject, StoreEvent, WatchHandle } from './store.js';

/** Delay before relisting after a failure other than compaction. */
const RELIST_DELAY_MS = 1000;

export interface ReflectorHandlers {
  /** Replaces the whole copy with a fresh list of the prefix (the first list and every relist). */
  replace(items: StoredObject[]): void;
  /** Applies one watch event; must not throw (see `Store.watch`). */
  apply(event: StoreEvent): void;
}

export class Reflector {
  private current = false;
  private stopped = false;
  private watch: WatchHandle | undefined;
  private timer: NodeJS.Timeout | undefined;

  /** Starts listing `prefix` at once. */
  constructor(
    private readonly store: Store,
    private readonly prefix: string,
    private readonly handlers: ReflectorHandlers,
  ) {
    void this.relist();
  }

  /** Whether the list is done and its watch is running: until then the copy may be stale. */
  get synced(): boolean {
    return this.current;
  }

  stop(): void {
    this.stopped = true;
    this.current = false;
    clearTimeout(this.timer);
    this.watch?.stop();
  }

  private async relist(): Promise<void> {
    this.current = false;
    this.watch?.stop();
    if (this.stopped) return;
    try {
      const res = await this.store.range({ prefix: this.prefix });
      if (this.stopped) return;
      this.handlers.replace(res.items);
      this.watch = this.store.watch(this.prefix, {
        fromRevision: res.revision,
        onEvent: (e) => this.handlers.apply(e),
        onError: (err) => this.retry(err.code === 'Compacted' ? 0 : RELIST_DELAY_MS),
      });
      this.current = true;
    } catch {
      this.retry(RELIST_DELAY_MS);
    }
  }

  private retry(delayMs: number): void {
    this.current = false;
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.relist(), delayMs);
    this.timer.unref();
  }
}
