/**
 * kube-apiserver's --request-timeout (default 1m0s): a request that is not long-running and whose
 * handler has not answered by then gets a 504 Timeout Status, "request did not complete within
 * requested timeout - context deadline exceeded", as upstream's request deadline ends it. A request's
 * own `?timeout=` (client-go sends it, e.g. kubectl --request-timeout) shortens it, never lengthens
 * it; one that is not a Go duration is a 400. The deadline counts from the request's arrival, so
 * authentication and a wait in a flow-control queue count too.
 *
 * The handler cannot be cancelled from outside (a promise has no context to abort); it runs on, and
 * what it does after the 504 is dropped: its response writes find the response ended (writeBody ends
 * nothing twice), its audit event is already out, a late error is logged, not answered. A write it
 * makes to the store is one atomic transaction that happens whole or not at all, as upstream's etcd
 * write goes on after its deadline: a 504 on a create or update means "not known", and the client
 * reads the object to learn which. A response whose headers are already out but whose body is not
 * ended when the deadline passes is aborted, as upstream's timeout filter does (the connection closed,
 * or the HTTP/2 stream reset): the client sees a broken response, never one cut short that looks whole.
 */
import type { ServerResponse } from 'node:http';
import { parseDuration } from '../../config/duration.js';
import type { Logger } from '../../log/logger.js';
import { errors } from '../http/errors.js';
import type { RequestInfo } from '../http/request-info.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** Upstream's BasicLongRunningRequestCheck as kube-apiserver configures it: no deadline for these. */
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

function isLongRunning(info: RequestInfo): boolean {
  return LONG_RUNNING_VERBS.has(info.verb) || (info.subresource !== undefined && LONG_RUNNING_SUBRESOURCES.has(info.subresource));
}

/**
 * The request's deadline in ms from now: the server's, or `?timeout=` when that is shorter and above
 * zero (zero or negative: no wish of the client's, as upstream reads it); undefined for a long-running
 * request. Throws the 400 upstream answers for a timeout that is not a duration.
 */
export function requestDeadlineMs(info: RequestInfo, query: URLSearchParams, serverMs: number): number | undefined {
  if (isLongRunning(info)) return undefined;
  const text = query.get('timeout');
  if (text === null || text === '') return serverMs;
  const negative = text.startsWith('-');
  const ms = parseDuration(text.replace(/^[-+]/, ''));
  if (ms === undefined) throw errors.badRequest(`invalid timeout specified in the request URL - time: invalid duration ${JSON.stringify(text)}`);
  return !negative && ms > 0 && ms < serverMs ? ms : serverMs;
}

const TIMEOUT_MESSAGE = 'request did not complete within requested timeout - context deadline exceeded';

/** A request's deadline, linked into the queue of its duration, in order of arrival. */
class Deadline {
  prev: Deadline | undefined;
  next: Deadline | undefined;
  timedOut = false;
  constructor(
    readonly at: number,
    readonly res: ServerResponse,
    readonly reject: (err: unknown) => void,
  ) {}
}

/** The deadlines of one duration: they come due in the order they were set, so only the head is timed. */
class DeadlineQueue {
  head: Deadline | undefined;
  tail: Deadline | undefined;
  timer: NodeJS.Timeout | undefined;

  push(d: Deadline): void {
    d.prev = this.tail;
    if (this.tail) this.tail.next = d;
    else this.head = d;
    this.tail = d;
  }

  remove(d: Deadline): void {
    if (d.prev) d.prev.next = d.next;
    else if (this.head === d) this.head = d.next;
    else return;
    if (d.next) d.next.prev = d.prev;
    else this.tail = d.prev;
    d.prev = d.next = undefined;
  }
}

/**
 * The deadlines of the requests under way, timed by one timer per duration (--request-timeout, and
 * each `?timeout=` in use) rather than one timer per request: a request's costs a link into its
 * queue and out. A timer set for a deadline whose request has finished fires early, finds the head
 * not yet due and waits for it; the queue goes when it is empty.
 */
export class RequestDeadlines {
  private readonly queues = new Map<number, DeadlineQueue>();
  constructor(private readonly logger: Logger) {}

  /**
   * `work`'s outcome, or the 504 once `ms` have passed since `start` (performance.now()) with the
   * response not begun (begun and not ended: it is aborted). Whatever `work` does after that is
   * dropped; an error it ends with is logged, as upstream logs post-timeout activity.
   */
  race(work: Promise<void>, ms: number, start: number, res: ServerResponse): Promise<void> {
    let queue = this.queues.get(ms);
    if (!queue) {
      this.queues.set(ms, (queue = new DeadlineQueue()));
      this.arm(ms, queue, ms);
    }
    const q = queue;
    return new Promise((resolve, reject) => {
      const d = new Deadline(start + ms, res, reject);
      q.push(d);
      work.then(
        () => {
          q.remove(d);
          resolve();
        },
        (err: unknown) => {
          q.remove(d);
          if (d.timedOut) this.logger.warn({ err }, 'request failed after its timeout was answered');
          else reject(err);
        },
      );
    });
  }

  /** No deadline is timed any more: the server closes. */
  close(): void {
    for (const q of this.queues.values()) clearTimeout(q.timer);
    this.queues.clear();
  }

  /** Unref'd: a request under way keeps the process up by its connection, not by its deadline. */
  private arm(ms: number, queue: DeadlineQueue, delay: number): void {
    queue.timer = setTimeout(() => this.due(ms, queue), delay).unref();
  }

  private due(ms: number, queue: DeadlineQueue): void {
    const now = performance.now();
    let d = queue.head;
    while (d && d.at <= now) {
      queue.remove(d);
      if (!d.res.headersSent) {
        d.timedOut = true;
        d.reject(errors.timeout(TIMEOUT_MESSAGE));
      } else if (!d.res.writableEnded) {
        // Too late for a 504: abort, as upstream panics with ErrAbortHandler. An ended response is whole.
        d.res.destroy();
      }
      d = queue.head;
    }
    if (d) this.arm(ms, queue, Math.ceil(d.at - now));
    else this.queues.delete(ms);
  }
}
