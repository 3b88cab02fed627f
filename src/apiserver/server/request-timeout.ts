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
 * reads the object to learn which. A response whose headers are already out when the deadline passes
 * is left to finish: ending it there would hand the client a body cut short that looks whole.
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

/**
 * `work`'s outcome, or the 504 once `ms` have passed with the response not begun. Whatever `work`
 * does after that is dropped; an error it ends with is logged, as upstream logs post-timeout activity.
 */
export function withDeadline(work: Promise<void>, ms: number, res: ServerResponse, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      timedOut = true;
      reject(errors.timeout('request did not complete within requested timeout - context deadline exceeded'));
    }, ms);
    work.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (timedOut) logger.warn({ err }, 'request failed after its timeout was answered');
        else reject(err);
      },
    );
  });
}
