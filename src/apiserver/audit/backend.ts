/**
 * Audit backends and upstream's modes around them: `blocking` writes each event in the request
 * path (a failure is counted and logged, the request goes on), `blocking-strict` also fails the
 * request when its RequestReceived event cannot be written, and `batch` queues events in a bounded
 * buffer that a background loop sends in batches, throttled, so a slow or dead receiver never holds
 * a request: a full buffer drops the event and counts it.
 */
import type { Logger } from '../../log/logger.js';
import type { AuditMetrics } from './metrics.js';
import type { AuditEvent } from './types.js';

export type Plugin = 'log' | 'webhook';

/** How long close() waits for batches under way before it ends them. */
const CLOSE_GRACE_MS = 5000;

export interface Backend {
  /** False when the events were not recorded (the backend has counted and logged why). */
  processEvents(events: AuditEvent[]): boolean | Promise<boolean>;
  close(): Promise<void>;
}

export const MODES = ['blocking', 'blocking-strict', 'batch'] as const;
export type Mode = (typeof MODES)[number];

export interface BatchConfig {
  bufferSize: number;
  maxBatchSize: number;
  maxBatchWaitMs: number;
  throttle?: { qps: number; burst: number };
  /** Send each batch without waiting for the one before (the webhook's), or one at a time (the log's). */
  asyncDelegate: boolean;
}

/** upstream's error report: the events lost, counted per plugin, and one log line. */
export function pluginError(metrics: AuditMetrics, logger: Logger, plugin: Plugin | 'truncate', err: unknown, count: number): void {
  metrics.errors.inc({ plugin }, count);
  logger.error({ plugin, err, events: count }, 'unable to write audit events');
}

/** A backend whose failures never fail a request (every mode but blocking-strict). */
export function ignoringErrors(backend: Backend): Backend {
  return {
    processEvents(events) {
      const r = backend.processEvents(events);
      return typeof r === 'boolean' ? true : r.then(
        () => true,
        () => true,
      );
    },
    close: () => backend.close(),
  };
}

/** A token bucket: `burst` at once, refilled at `qps`; take() waits for a token. */
class TokenBucket {
  private tokens: number;
  private last = performance.now();

  constructor(private readonly qps: number, private readonly burst: number) {
    this.tokens = burst;
  }

  async take(signal: AbortSignal): Promise<void> {
    for (;;) {
      const now = performance.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
      if (this.tokens >= 1 || signal.aborted) {
        this.tokens--;
        return;
      }
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const t = setTimeout(done, ((1 - this.tokens) / this.qps) * 1000);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}

export class BufferedBackend implements Backend {
  private queue: AuditEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly throttle: TokenBucket | undefined;
  /** Aborted on close: the throttle stops waiting and what is left is sent at once. */
  private readonly closing = new AbortController();

  constructor(
    private readonly delegate: Backend,
    private readonly plugin: Plugin,
    private readonly config: BatchConfig,
    private readonly metrics: AuditMetrics,
    private readonly logger: Logger,
  ) {
    this.throttle = config.throttle && new TokenBucket(config.throttle.qps, config.throttle.burst);
  }

  processEvents(events: AuditEvent[]): boolean {
    const room = this.closing.signal.aborted ? 0 : Math.max(0, this.config.bufferSize - this.queue.length);
    if (room < events.length) {
      pluginError(this.metrics, this.logger, this.plugin, new Error('audit buffer queue blocked'), events.length - room);
    }
    for (const ev of events.slice(0, room)) this.queue.push(ev);
    this.schedule();
    return room >= events.length;
  }

  private schedule(): void {
    if (this.running || this.queue.length === 0) return;
    if (this.queue.length >= this.config.maxBatchSize || this.config.maxBatchWaitMs <= 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      void this.run();
    } else this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, this.config.maxBatchWaitMs);
  }

  /** Sends full batches while there are any, then the partial one the wait ran out for. */
  private async run(): Promise<void> {
    this.running = true;
    try {
      do {
        const batch = this.queue.splice(0, this.config.maxBatchSize);
        if (batch.length === 0) break;
        await this.throttle?.take(this.closing.signal);
        const sent = Promise.resolve()
          .then(() => this.delegate.processEvents(batch))
          .catch((err: unknown) => pluginError(this.metrics, this.logger, this.plugin, err, batch.length));
        this.inFlight.add(sent);
        void sent.finally(() => this.inFlight.delete(sent));
        if (!this.config.asyncDelegate) await sent;
      } while (this.queue.length >= this.config.maxBatchSize || (this.closing.signal.aborted && this.queue.length > 0));
    } finally {
      this.running = false;
      this.schedule();
    }
  }

  /** Sends what is queued and waits for every batch under way, then closes the backend beneath. */
  async close(): Promise<void> {
    this.closing.abort();
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.running) await this.run();
    // Bounded: a receiver that hangs must not hold the server's shutdown; closing the delegate ends what is left.
    const deadline = Date.now() + CLOSE_GRACE_MS;
    while ((this.running || this.inFlight.size > 0) && Date.now() < deadline) {
      await Promise.race([Promise.all([...this.inFlight]), new Promise((r) => setTimeout(r, 50))]);
    }
    await this.delegate.close();
  }
}

/** Every backend gets every event; the request goes on only if each one that may refuse accepted. */
export function unionBackend(backends: Backend[]): Backend {
  return {
    processEvents(events) {
      const results = backends.map((b) => b.processEvents(events));
      if (results.every((r) => typeof r === 'boolean')) return results.every(Boolean);
      return Promise.all(results).then((rs) => rs.every(Boolean));
    },
    async close() {
      await Promise.all(backends.map((b) => b.close()));
    },
  };
}
