/**
 * How a reconcile error is treated (controller-runtime's reconcileHandler plus the project's classes):
 * - conflict (HTTP 409) or RequeueError: the cache was stale or it is "not yet"; requeue with backoff,
 *   counted as `requeue`, not as an error;
 * - not found (HTTP 404): the object is gone, nothing left to do;
 * - TerminalError: retrying cannot help; counted as an error, not retried;
 * - anything else: counted as an error and retried with backoff.
 * The class is found by walking the `cause` chain, outermost first, as Go's errors.As: an error
 * wrapped with context (wrapError) keeps the class of what it wraps, whatever the wrapper. The
 * status predicates (isNotFound, isConflict, ...) are in lib/api-errors.ts, shared with the server.
 */
import { causeChain, ownStatus } from '../../lib/api-errors.js';

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

/** `prefix: message`, keeping err as the cause so classification sees through it (Go's `%w`). */
export function wrapError(prefix: string, err: unknown): Error {
  return new Error(`${prefix}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

export function classifyError(err: unknown): ErrorClass {
  for (const e of causeChain(err)) {
    if (e instanceof TerminalError) return 'terminal';
    if (e instanceof RequeueError) return 'conflict';
    const code = ownStatus(e);
    if (code === 409) return 'conflict';
    if (code === 404) return 'notFound';
    if (code !== undefined) return 'retry';
  }
  return 'retry';
}

/** What the controller logs, as an error, when the API server answers 401 or 403 (it still retries). */
export const REFUSED_MESSAGE = 'the API server refused these credentials: check --kubeconfig';
