/**
 * A client-go style informer (reflector + indexer + handlers) for one collection:
 * - LIST in pages, replace the cache, then WATCH from the list's resourceVersion with bookmarks;
 * - on EVERY watch end (error, clean close, server timeout) reconnect with jittered exponential backoff
 *   from the last seen resourceVersion (events and bookmarks advance it); the backoff resets once a
 *   watch delivered something;
 * - on 410 (an ERROR event with code 410, or HTTP 410) relist; objects missing from the new list are
 *   delivered as deletes with their last known state (`finalStateUnknown`, client-go's DeletedFinalStateUnknown);
 * - a watchdog restarts a watch that stayed silent longer than 1.5× the bookmark interval (half-open
 *   connections, client-node issues #364/#596);
 * - a periodic resync calls `update(obj, obj)` for every cached object so level-based controllers re-check;
 * - objects pass through `transform` before they are cached (default: drop metadata.managedFields,
 *   as controller-runtime's TransformStripManagedFields; no controller here reads them, and they are
 *   ~20% of a cached CSR's heap).
 * A LIST is applied page by page, so the parsed pages are never all alive next to the cache.
 * Handlers run synchronously; a throwing handler is logged and does not stop the informer.
 */
import type { KObject, WatchEvent } from '../../api/meta.js';
import { sleep, type Clock, type TimerHandle } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import type { InformerMetrics, WatchRestartReason } from '../../metrics/informer.js';
import { httpStatusOf, isGone, isRefused } from '../../lib/api-errors.js';
import { REFUSED_MESSAGE } from '../client/errors.js';
import { deepFreeze } from '../../lib/json.js';
import { JitteredBackoff } from '../../lib/backoff.js';
import { Cache, keyOf, type Indexers, type ReadonlyCache } from './cache.js';
import type { ListWatch, WatchHandle } from './list-watch.js';

export interface DeleteInfo {
  /** True when the delete was inferred from a relist: `obj` is the last state the cache saw. */
  finalStateUnknown: boolean;
}

export interface EventHandlers<T> {
  add?(obj: Readonly<T>): void;
  update?(oldObj: Readonly<T>, newObj: Readonly<T>): void;
  delete?(obj: Readonly<T>, info: DeleteInfo): void;
}

export interface InformerOptions<T extends KObject> {
  name: string;
  listWatch: ListWatch<T>;
  clock: Clock;
  logger: Logger;
  metrics?: InformerMetrics;
  indexers?: Indexers<T>;
  /** 0 disables resync. */
  resyncPeriodMs?: number;
  pageSize?: number;
  /** How often the server sends bookmarks; the watchdog fires after 1.5× this much silence. */
  bookmarkIntervalMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  random?: () => number;
  /** Applied to every object (which the informer owns) before it is cached or handed to handlers. */
  transform?: (obj: T) => T;
}

/**
 * The default transform: the object without metadata.managedFields. The informer owns the objects
 * its ListWatch hands it, so an unfrozen one is changed in place: a spread copy of a parsed object
 * costs ~200 B more heap per cached object than the original.
 */
export function stripManagedFields<T extends KObject>(obj: T): T {
  if (obj.metadata?.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  if (Object.isFrozen(obj)) return { ...obj, metadata };
  obj.metadata = metadata;
  return obj;
}

/** Sets kind and apiVersion from the list when items lack them (in place unless frozen). */
function withTypeMeta<T extends KObject>(item: T, kind: string, apiVersion: string): T {
  if (item.kind !== undefined && item.apiVersion !== undefined) return item;
  if (Object.isFrozen(item)) return { ...item, kind: item.kind ?? kind, apiVersion: item.apiVersion ?? apiVersion };
  item.kind ??= kind;
  item.apiVersion ??= apiVersion;
  return item;
}

type WatchEnd = WatchRestartReason | 'stopped';

export class Informer<T extends KObject = KObject> {
  readonly name: string;
  private readonly cache: Cache<T>;
  private readonly handlers: EventHandlers<T>[] = [];
  private readonly logger: Logger;
  /** Reconnect delays: doubling from backoffInitialMs to backoffMaxMs, each plus up to 100% jitter (client-go's wait.Jitter). */
  private readonly backoff: JitteredBackoff;
  private readonly random: () => number;
  private readonly transform: (obj: T) => T;
  private lastRV = '';
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private resyncTimer: TimerHandle | undefined;
  /** Clock time a watch last connected or delivered an event (the watchdog's and the metric's). */
  private lastWatchActivity = 0;

  constructor(private readonly opts: InformerOptions<T>) {
    this.name = opts.name;
    this.cache = new Cache(opts.indexers);
    this.logger = opts.logger.child({ informer: opts.name });
    this.random = opts.random ?? Math.random;
    this.transform = opts.transform ?? stripManagedFields;
    this.backoff = new JitteredBackoff({ initialMs: opts.backoffInitialMs, maxMs: opts.backoffMaxMs, random: this.random });
    opts.metrics?.synced.set({ informer: opts.name }, 0);
    // Read when metrics are scraped: a gauge set per watch event cost a label hash each time.
    opts.metrics?.initInformer(opts.name, {
      objects: () => this.cache.size(),
      lastWatchEventMs: () => (this.lastWatchActivity > 0 ? this.lastWatchActivity : undefined),
    });
  }

  get store(): ReadonlyCache<T> {
    return this.cache;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** The resourceVersion the next watch resumes from. */
  lastSyncResourceVersion(): string {
    return this.lastRV;
  }

  /** Resolves once synced, or when `signal` aborts (check hasSynced()). */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.syncWaiters.push(resolve);
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  /** Registers handlers; once synced, a late handler first gets `add` for every cached object. */
  addHandlers(h: EventHandlers<T>): void {
    this.handlers.push(h);
    if (this.synced) for (const obj of this.cache.list()) this.call(() => h.add?.(obj));
  }

  /** Lists and watches until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      if (needList) {
        try {
          await this.relist(signal);
          needList = false;
        } catch (err) {
          if (signal.aborted) break;
          if (isRefused(err)) this.logger.error({ err, status: httpStatusOf(err) }, REFUSED_MESSAGE);
          else this.logger.info({ err }, 'list failed, retrying');
          await sleep(this.opts.clock, this.backoff.next(), signal);
          continue;
        }
      }
      const { reason, sawEvents, err } = await this.watchOnce(signal);
      if (reason === 'stopped') break;
      this.opts.metrics?.watchRestarts.inc({ informer: this.name, reason });
      if (reason === 'expired') needList = true;
      if (sawEvents) this.backoff.reset();
      this.logger.debug({ reason, err, resourceVersion: this.lastRV }, 'watch ended, reconnecting');
      await sleep(this.opts.clock, this.backoff.next(), signal);
    }
    this.resyncTimer?.cancel();
  }

  /**
   * LISTs page by page and upserts each page as it arrives (a page's parsed items are garbage once
   * cached); keys the list did not return are then deleted, as client-go's Replace does.
   */
  private async relist(signal: AbortSignal): Promise<void> {
    this.opts.metrics?.relists.inc({ informer: this.name });
    const seen = new Set<string>();
    let rv: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.opts.listWatch.list({ limit: this.opts.pageSize ?? 500, continue: cont }, signal);
      if (signal.aborted) return;
      rv ??= page.metadata.resourceVersion ?? '';
      const kind = page.kind.replace(/List$/, '');
      for (const item of page.items) seen.add(this.cacheObject(withTypeMeta(item, kind, page.apiVersion)));
      cont = page.metadata.continue || undefined;
    } while (cont && !signal.aborted);
    if (signal.aborted) return;
    for (const key of this.cache.keys()) {
      if (seen.has(key)) continue;
      const old = this.cache.delete(key) as Readonly<T>;
      this.emit((h) => h.delete?.(old, { finalStateUnknown: true }));
    }
    this.lastRV = rv ?? '';
    this.markSynced();
  }

  /** Transforms, caches and announces one object (add or update); returns its key. */
  private cacheObject(obj: T): string {
    const { key, old, obj: stored } = this.cache.upsert(this.transform(obj));
    if (old) this.emit((h) => h.update?.(old, stored));
    else this.emit((h) => h.add?.(stored));
    return key;
  }

  private markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    this.opts.metrics?.synced.set({ informer: this.name }, 1);
    for (const w of this.syncWaiters.splice(0)) w();
    this.scheduleResync();
  }

  private scheduleResync(): void {
    const period = this.opts.resyncPeriodMs ?? 0;
    if (period <= 0) return;
    this.resyncTimer = this.opts.clock.setTimeout(() => {
      for (const obj of this.cache.list()) this.emit((h) => h.update?.(obj, obj));
      this.scheduleResync();
    }, period);
  }

  private watchOnce(signal: AbortSignal): Promise<{ reason: WatchEnd; sawEvents: boolean; err?: unknown }> {
    const { clock } = this.opts;
    const silenceMs = 1.5 * (this.opts.bookmarkIntervalMs ?? 60_000);
    return new Promise((resolve) => {
      let finished = false;
      let sawEvents = false;
      let handle: WatchHandle | undefined;
      let watchdog: TimerHandle | undefined;
      const finish = (reason: WatchEnd, err?: unknown): void => {
        if (finished) return;
        finished = true;
        watchdog?.cancel();
        signal.removeEventListener('abort', onAbort);
        handle?.stop();
        resolve({ reason, sawEvents, err });
      };
      const onAbort = (): void => finish('stopped');
      // One timer per silence, not one per event: when it fires it looks at the last event and
      // either ends the watch or waits out the rest of the silence from that event.
      const watch = (delayMs: number): void => {
        watchdog = clock.setTimeout(() => {
          const quietMs = clock.now() - this.lastWatchActivity;
          if (quietMs >= silenceMs) finish('watchdog');
          else watch(silenceMs - Math.max(0, quietMs));
        }, delayMs);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.lastWatchActivity = clock.now();
      watch(silenceMs);
      const timeoutSeconds = 300 + Math.floor(this.random() * 300);
      this.opts.listWatch
        .watch(
          { resourceVersion: this.lastRV, allowWatchBookmarks: true, timeoutSeconds },
          {
            onEvent: (ev) => {
              if (finished) return;
              sawEvents = true;
              this.lastWatchActivity = clock.now();
              const end = this.handleEvent(ev);
              if (end) finish(end, ev.object);
            },
            onDone: (err) => finish(err === undefined || err === null ? 'closed' : isGone(err) ? 'expired' : 'error', err),
          },
        )
        .then(
          (h) => {
            handle = h;
            if (finished) h.stop();
            else this.lastWatchActivity = clock.now();
          },
          (err: unknown) => finish('error', err),
        );
    });
  }

  /** Applies one event; returns why the watch must end, if it must. */
  private handleEvent(ev: WatchEvent<T>): WatchRestartReason | undefined {
    const obj = ev.object;
    if (ev.type === 'ERROR') {
      this.logger.info({ status: obj }, 'watch error event');
      // The object is a Status: its code classifies as an error's would.
      return isGone(obj) ? 'expired' : 'error';
    }
    const rv = obj?.metadata?.resourceVersion;
    if (ev.type === 'ADDED' || ev.type === 'MODIFIED') {
      this.cacheObject(obj);
    } else if (ev.type === 'DELETED') {
      this.cache.delete(keyOf(obj));
      const final = deepFreeze(this.transform(obj));
      this.emit((h) => h.delete?.(final, { finalStateUnknown: false }));
    }
    if (rv) this.lastRV = rv;
    return undefined;
  }

  private emit(fn: (h: EventHandlers<T>) => void): void {
    for (const h of this.handlers) this.call(() => fn(h));
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error({ err }, 'event handler failed');
    }
  }
}
