/**
 * `--event-ttl` on the stores without leases (SQLite, memory). kube-apiserver writes every Event
 * with an etcd lease of the TTL, so an Event vanishes that long after its last write (and watchers
 * see it DELETED); here a sweep deletes, at the revision it read, each Event whose last write is
 * older than the TTL. Its last write is the newest of its creation and its managedFields times (every
 * write through the API records one), to the second as those times are.
 */
import type { KObject } from '../../api/meta.js';
import type { Clock, TimerHandle } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import { isRaceError, type Store, storageKey } from '../storage/store.js';

const EVENTS = storageKey('', 'events', undefined);
const PAGE = 500;
/** A sweep every tenth of the TTL, within these bounds: an Event outlives its TTL by at most that. */
const MIN_INTERVAL_MS = 1000;
const MAX_INTERVAL_MS = 60_000;

export interface EventExpiryOptions {
  store: Store;
  ttlMs: number;
  clock: Clock;
  logger: Logger;
}

/** When `event` was last written, as far as it says (ms since the epoch; 0 when it says nothing). */
export function lastWrite(event: KObject): number {
  const times = [event.metadata?.creationTimestamp, ...(event.metadata?.managedFields ?? []).map((e) => e.time)];
  return Math.max(0, ...times.map((t) => (typeof t === 'string' ? Date.parse(t) : NaN)).filter((t) => !Number.isNaN(t)));
}

export class EventExpiry {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly intervalMs: number;

  constructor(private readonly opts: EventExpiryOptions) {
    this.intervalMs = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, Math.floor(opts.ttlMs / 10)));
  }

  start(): void {
    this.schedule();
  }

  /** Stops; resolves once a sweep under way has ended, so the store can be closed after it. */
  stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    return this.running ?? Promise.resolve();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.opts.clock.setTimeout(() => {
      this.running = this.sweep()
        .then(() => undefined)
        .catch((err: unknown) => this.opts.logger.warn({ err }, 'event expiry sweep failed'))
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, this.intervalMs);
  }

  /** Deletes every Event past its TTL; returns how many. */
  async sweep(): Promise<number> {
    const deadline = this.opts.clock.now() - this.opts.ttlMs;
    let deleted = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.opts.store.range({ prefix: EVENTS, after, limit: PAGE });
      for (const item of page.items) {
        if (this.stopped) break;
        if (lastWrite(item.object) > deadline) continue;
        try {
          await this.opts.store.delete(item.key, item.revision);
          deleted++;
        } catch (e) {
          // Written again (it lives on) or deleted meanwhile.
          if (!isRaceError(e)) throw e;
        }
      }
      if (page.remaining === 0 || page.items.length === 0 || this.stopped) break;
      after = page.items[page.items.length - 1]?.key;
    }
    if (deleted > 0) this.opts.logger.debug({ deleted }, 'expired events deleted');
    return deleted;
  }
}
