/**
 * How a reconcile error is treated (controller-runtime's reconcileHandler plus the project's classes):
 * - conflict (HTTP 409) or RequeueError: the cache was stale or it is "not yet"; requeue with backoff,
 *   counted as `requeue`, not as an error;
 * - not found (HTTP 404): the object is gone, nothing left to do;
 * - TerminalError: retrying cannot help; counted as an error, not retried;
 * - anything else: counted as an error and retried with backoff.
 * The class is found by walking the `cause` chain, outermost first, as Go's errors.As: an error
 * wrapped with context (wrapError) keeps the class of what it wraps, whatever the wrapper.
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

/** How many causes deep a chain is followed (a guard against a cycle or a runaway chain). */
const MAX_DEPTH = 32;

/** err, then its cause, its cause's cause... (Go's errors.Unwrap, repeated). */
function* causeChain(err: unknown): Generator<unknown> {
  let e = err;
  for (let depth = 0; depth < MAX_DEPTH && e !== undefined && e !== null; depth++) {
    yield e;
    if (typeof e !== 'object') return;
    const next = (e as { cause?: unknown }).cause;
    if (next === e) return;
    e = next;
  }
}

/** The first error on err's cause chain that is a `cls` (Go's errors.As). */
export function errorAs<T>(err: unknown, cls: abstract new (...args: never[]) => T): T | undefined {
  for (const e of causeChain(err)) if (e instanceof cls) return e;
  return undefined;
}

/** `prefix: message`, keeping err as the cause so classification sees through it (Go's `%w`). */
export function wrapError(prefix: string, err: unknown): Error {
  return new Error(`${prefix}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

/** The HTTP status of an error from client-node (ApiException.code) or our Watch errors (statusCode). */
function ownStatus(e: unknown): number | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const { code, statusCode } = e as { code?: unknown; statusCode?: unknown };
  if (typeof code === 'number') return code;
  if (typeof statusCode === 'number') return statusCode;
  return undefined;
}

/** The HTTP status nearest the top of err's cause chain, however many wrappers carry context. */
export function httpStatusOf(err: unknown): number | undefined {
  for (const e of causeChain(err)) {
    const status = ownStatus(e);
    if (status !== undefined) return status;
  }
  return undefined;
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

export const isNotFound = (err: unknown): boolean => httpStatusOf(err) === 404;
export const isConflict = (err: unknown): boolean => httpStatusOf(err) === 409;
export const isGone = (err: unknown): boolean => httpStatusOf(err) === 410;

/** What the controller logs, as an error, when the API server answers 401 or 403 (it still retries). */
export const REFUSED_MESSAGE = 'the API server refused these credentials: check --kubeconfig';

/** 401 Unauthorized or 403 Forbidden: retrying will not help until someone fixes the credentials or RBAC. */
export function isRefused(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status === 401 || status === 403;
}
