/**
 * Overload is shed as kube-apiserver sheds it: a request beyond what the server may execute at once
 * waits in a queue of its priority level for a bounded time, or is answered 429 TooManyRequests with
 * a `Retry-After` (upstream's message, as a Status) and counted in upstream's metrics: 1 s, or with
 * priority and fairness what the level's recent sheds say, as upstream's (retry-after.ts). It runs after
 * authentication (the user picks the level) and before authorization, as in upstream's chain.
 * Watches are long-running and take no seat, as upstream's max-in-flight filter leaves them out; with
 * priority and fairness a watch is still classified, as upstream's filter classifies a watch before it
 * starts, and shed like the other requests of its level while the loop is saturated (below).
 *
 * On one event loop a request holds its seat for microseconds, so the seats are not where overload
 * queues: the loop is (loop-saturation.ts). While it is saturated, the workload level's requests
 * (new joins' CSRs, lists, nodes' other requests, everybody else) are answered 429 at once, as
 * upstream answers a request that waited in its queue past the limit (reason `time-out`): their wait
 * was the loop's delay. Watches at that level are shed too: after a restart every kubelet's informers
 * start their watches again at once, and each start (its history replayed or a 410 refused) is loop
 * time taken from the Lease renewals. node-high (a node's own Node watch included), leader-election,
 * workload-high and exempt requests go on.
 *
 * With priority and fairness (the default) --max-requests-inflight plus
 * --max-mutating-requests-inflight seats are shared out among the levels by their shares, and a level
 * lends its idle lendable seats to a level whose own are all taken (priority-level.ts); without it
 * the two limits hold for read-only and mutating requests separately, with no queuing, and only
 * system:masters passes a full server (upstream's max-in-flight filter).
 */
import type { ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { UserInfo } from '../../api/meta.js';
import { MASTERS_GROUP } from '../authorization/rbac/rbac-authorizer.js';
import { errors } from '../http/errors.js';
import type { RequestInfo } from '../http/request-info.js';
import { classify, type PriorityLevelName } from './classify.js';
import { LoopSaturation } from './loop-saturation.js';
import { FlowControlMetrics, type FlowSeries } from './metrics.js';
import { LendingPool, PriorityLevel, type QueuingConfig, type Rejection } from './priority-level.js';
import { RetryAfter } from './retry-after.js';

export interface FlowControlOptions {
  /** --max-requests-inflight (0: no limit). */
  maxRequestsInflight: number;
  /** --max-mutating-requests-inflight (0: no limit). */
  maxMutatingRequestsInflight: number;
  /** --enable-priority-and-fairness (default true). */
  priorityAndFairness?: boolean;
  /** Queuing per level, in place of the defaults (tests make them small). */
  queuing?: Partial<Record<QueuedLevel, QueuingConfig>>;
  /** --max-event-loop-delay: the loop's smoothed delay at which workload requests are shed (0: never; needs priority and fairness). */
  maxEventLoopDelayMs?: number;
  registry?: Registry;
}

export const FLOW_CONTROL_DEFAULTS = { maxRequestsInflight: 400, maxMutatingRequestsInflight: 200, priorityAndFairness: true, maxEventLoopDelayMs: 250 };

type QueuedLevel = Exclude<PriorityLevelName, 'exempt'>;

/** Each level's share of the seats (upstream's nominal concurrency shares; workload sums workload-low, global-default and catch-all). */
const SHARES: Record<QueuedLevel, number> = { 'leader-election': 10, 'node-high': 40, 'workload-high': 40, workload: 125 };

/**
 * The share of each level's seats it lends while idle: upstream's suggested lendablePercent
 * (workload's mixes workload-low's 90, global-default's 50 and catch-all's 0 by their shares), rounded
 * down to whole seats, so a level of one seat lends none.
 */
const LENDABLE_PERCENT: Record<QueuedLevel, number> = { 'leader-election': 0, 'node-high': 25, 'workload-high': 50, workload: 80 };

/** Upstream's suggested queuing of the corresponding levels. */
const QUEUING: Record<QueuedLevel, QueuingConfig> = {
  'leader-election': { queues: 16, queueLengthLimit: 50, handSize: 4 },
  'node-high': { queues: 64, queueLengthLimit: 50, handSize: 6 },
  'workload-high': { queues: 128, queueLengthLimit: 50, handSize: 6 },
  workload: { queues: 128, queueLengthLimit: 50, handSize: 6 },
};

/** The max-in-flight filter's Retry-After (with priority and fairness it follows what each level sheds: retry-after.ts). */
const RETRY_AFTER_SECONDS = 1;
/** Upstream's hard limit on any request's wait in a queue. */
const MAX_QUEUE_WAIT_MS = 60_000;

/**
 * How long after its arrival a request may wait in a queue for a seat, as upstream's priority and
 * fairness filter allows: a quarter of its deadline (--request-timeout, or its shorter `?timeout=`),
 * at most a minute. A request without a deadline is given a quarter of --request-timeout.
 */
export function queueWaitLimitMs(deadlineMs: number): number {
  return Math.min(deadlineMs / 4, MAX_QUEUE_WAIT_MS);
}

/**
 * Calls `fn` once the response has closed (answered and flushed, or its client gone), at once when
 * that happened before: the client may leave while the request is being authenticated.
 */
function whenClosed(res: ServerResponse, fn: () => void): void {
  // node:http2's compatibility response tells it by its stream.
  const h2 = (res as { stream?: { closed: boolean } }).stream;
  if (h2 ? h2.closed : res.closed) fn();
  else res.once('close', fn);
}
const NON_MUTATING_VERBS = new Set(['get', 'list', 'watch']);

/** The seat a request holds: one of its level's own, or one another level lent it. */
interface Seat {
  level: PriorityLevel;
  lender?: PriorityLevel;
}

/** A request on its way to a seat. */
interface Seating {
  levelName: PriorityLevelName;
  series: FlowSeries | undefined;
  res: ServerResponse;
  mutating: boolean;
  execute: () => Promise<void>;
}

export class FlowControl {
  private readonly metrics: FlowControlMetrics | undefined;
  private readonly levels: Map<string, PriorityLevel>;
  private readonly fair: boolean;
  private readonly loop: LoopSaturation | undefined;
  private readonly retryAfter = new RetryAfter();

  constructor(opts: FlowControlOptions) {
    this.fair = opts.priorityAndFairness ?? true;
    this.metrics = opts.registry && new FlowControlMetrics(opts.registry);
    const maxDelayMs = opts.maxEventLoopDelayMs ?? FLOW_CONTROL_DEFAULTS.maxEventLoopDelayMs;
    if (this.fair && maxDelayMs > 0) {
      this.loop = new LoopSaturation({ maxDelayMs });
      this.loop.start();
      this.metrics?.watchLoop(this.loop);
    }
    if (this.fair) {
      const seats = opts.maxRequestsInflight + opts.maxMutatingRequestsInflight;
      const total = Object.values(SHARES).reduce((a, b) => a + b, 0);
      const pool = new LendingPool();
      // Lenders are asked in this order: the largest lendable share first.
      this.levels = new Map(
        (['workload', 'workload-high', 'node-high', 'leader-election'] as const).map((name) => {
          const nominal = Math.ceil((seats * SHARES[name]) / total);
          this.metrics?.nominalSeats.set({ priority_level: name }, nominal);
          const lendable = Math.floor((nominal * LENDABLE_PERCENT[name]) / 100);
          return [name, new PriorityLevel(nominal, opts.queuing?.[name] ?? QUEUING[name], lendable, pool)];
        }),
      );
    } else {
      const noQueue = { queues: 0, queueLengthLimit: 0, handSize: 0 };
      this.levels = new Map([
        ['readOnly', new PriorityLevel(opts.maxRequestsInflight || Infinity, noQueue)],
        ['mutating', new PriorityLevel(opts.maxMutatingRequestsInflight || Infinity, noQueue)],
      ]);
    }
  }

  /**
   * Runs `execute` once the request may, or throws a 429 when it is shed. A watch takes no seat (but
   * is shed at the workload level while the loop is saturated). The
   * seat is held until `execute` has settled and the response has closed, whichever is later: as
   * upstream's handler goroutine keeps its seat after the --request-timeout 504 until it returns, and
   * its blocking writes keep it until a slow reader has the answer. A queued request waits until
   * `queueUntil` (performance.now()'s clock; see queueWaitLimitMs).
   */
  handle(user: UserInfo, info: RequestInfo, res: ServerResponse, queueUntil: number, execute: () => Promise<void>): Promise<void> {
    this.loop?.request();
    const watch = info.isResourceRequest && info.verb === 'watch';
    if (watch && !this.loop?.saturated) return execute();
    const mutating = !NON_MUTATING_VERBS.has(info.verb);
    if (!this.fair) return this.handleMaxInFlight(user, mutating, res, execute);
    const c = classify(user, info);
    const series = this.metrics?.series(c.priorityLevel, c.flowSchema);
    if (c.priorityLevel === 'workload' && this.loop?.saturated) return this.reject(c.priorityLevel, 'time-out', mutating, series, this.loop.delayMs / 1000);
    if (watch) return execute();
    const level = this.levels.get(c.priorityLevel);
    if (!level) return this.run(undefined, series, res, 0, execute);
    return this.seat(level, user.username, { levelName: c.priorityLevel, series, res, mutating, execute }, queueUntil);
  }

  /** A seat of the level's own, else one another level lends, else a place in its queues (or a 429). */
  private seat(level: PriorityLevel, flow: string, r: Seating, queueUntil: number): Promise<void> {
    if (level.tryAcquire()) return this.run({ level }, r.series, r.res, 0, r.execute);
    const lender = level.tryBorrow();
    if (lender) return this.run({ level, lender }, r.series, r.res, 0, r.execute);
    const started = performance.now();
    const ticket = level.enqueue(flow, Math.max(0, queueUntil - started));
    if (typeof ticket === 'string') return this.reject(r.levelName, ticket, r.mutating, r.series, 0);
    if (r.series) r.series.inQueue++;
    const cancel = (): void => ticket.cancel();
    whenClosed(r.res, cancel);
    return ticket.admitted.then((rejection) => {
      if (r.series) r.series.inQueue--;
      r.res.off('close', cancel);
      const waited = (performance.now() - started) / 1000;
      if (rejection) return this.reject(r.levelName, rejection, r.mutating, r.series, waited);
      return this.run({ level, lender: ticket.lender }, r.series, r.res, waited, r.execute);
    });
  }

  /** Upstream's max-in-flight filter: two plain limits, no queues, system:masters exempt. */
  private handleMaxInFlight(user: UserInfo, mutating: boolean, res: ServerResponse, execute: () => Promise<void>): Promise<void> {
    if (user.groups.includes(MASTERS_GROUP)) return execute();
    const level = this.levels.get(mutating ? 'mutating' : 'readOnly');
    if (!level?.tryAcquire()) this.shed(mutating, RETRY_AFTER_SECONDS);
    return this.run({ level }, undefined, res, 0, execute);
  }

  /** Stops sampling the event loop. */
  close(): void {
    this.loop?.stop();
  }

  /**
   * Runs the request on its seat, freed once `execute` has settled and the response has closed. An
   * exempt request holds no seat and executes until its handler settles, as upstream's until its
   * handler returns: it waits for no close, so it needs no listener on the response.
   */
  private run(seat: Seat | undefined, series: FlowSeries | undefined, res: ServerResponse, waited: number, execute: () => Promise<void>): Promise<void> {
    series?.dispatched(waited);
    if (!seat) return series ? this.runExempt(series, execute) : execute();
    if (series) series.executing++;
    let holds = 2;
    const done = (): void => {
      if (--holds > 0) return;
      if (series) series.executing--;
      seat.level.release(seat.lender);
    };
    whenClosed(res, done);
    const work = execute();
    work.then(done, done);
    return work;
  }

  private runExempt(series: FlowSeries, execute: () => Promise<void>): Promise<void> {
    series.executing++;
    const done = (): void => {
      series.executing--;
    };
    const work = execute();
    work.then(done, done);
    return work;
  }

  /** A request of `level` shed with priority and fairness: told to wait what the level's recent sheds say. */
  private reject(level: PriorityLevelName, why: Rejection, mutating: boolean, series: FlowSeries | undefined, waited: number): never {
    series?.rejected(why, waited);
    this.shed(mutating, this.retryAfter.shed(level));
  }

  private shed(mutating: boolean, retryAfterSeconds: number): never {
    this.metrics?.droppedRequest(mutating);
    throw errors.tooManyRequests(retryAfterSeconds);
  }
}
