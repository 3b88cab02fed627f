/**
 * How a reconcile error is treated (controller-runtime's reconcileHandler plus the project's classes):
 * - conflict (HTTP 409) or RequeueError: the cache was stale or it is "not yet"; requeue with backoff,
 *   counted as `requeue`, not as an error;
 * - not found (HTTP 404): the object is gone, nothing left to do;
 * - TerminalError: retrying cannot help; counted as an error, not retried;
 * - anything else: counted as an error and retried with backoff.
 */

/** Retrying will not help (a bad spec we cannot fix): log, count, and drop the key. */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Not an error: try again later with backoff, quietly (recognised but not ready yet). */
export class RequeueError extends Error {
  override readonly name = 'RequeueError';
}

export type ErrorClass = 'conflict' | 'notFound' | 'terminal' | 'retry';

/** The HTTP status of an error from client-node (ApiException.code), our Watch errors (statusCode) or a Status body. */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown };
  if (typeof e.code === 'number') return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

export function classifyError(err: unknown): ErrorClass {
  if (err instanceof TerminalError) return 'terminal';
  if (err instanceof RequeueError) return 'conflict';
  const code = httpStatusOf(err);
  if (code === 409) return 'conflict';
  if (code === 404) return 'notFound';
  return 'retry';
}

export const isNotFound = (err: unknown): boolean => httpStatusOf(err) === 404;
export const isConflict = (err: unknown): boolean => httpStatusOf(err) === 409;
export const isGone = (err: unknown): boolean => httpStatusOf(err) === 410;
