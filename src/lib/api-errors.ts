/**
 * What an API error is, by its HTTP status, as apimachinery's errors.IsNotFound, IsConflict...:
 * for every error shape the project meets (the server's ApiError, client-node's ApiException, the
 * controller's HttpStatusError, a watch error's `statusCode`), bare or wrapped with context. The
 * status is the one nearest the top of the `cause` chain, as Go's errors.As finds the nearest.
 */

/** How many causes deep a chain is followed (a guard against a cycle or a runaway chain). */
const MAX_DEPTH = 32;

/** err, then its cause, its cause's cause... (Go's errors.Unwrap, repeated). */
export function* causeChain(err: unknown): Generator<unknown> {
  let e = err;
  for (let depth = 0; depth < MAX_DEPTH && e !== undefined && e !== null; depth++) {
    yield e;
    if (typeof e !== 'object') return;
    const next = (e as { cause?: unknown }).cause;
    if (next === e) return;
    e = next;
  }
}

/** The HTTP status one error carries itself: `code` (ApiError, ApiException) or `statusCode` (a watch error). */
export function ownStatus(e: unknown): number | undefined {
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

/** 403 Forbidden. */
export const isForbidden = (err: unknown): boolean => httpStatusOf(err) === 403;
/** 404 NotFound. */
export const isNotFound = (err: unknown): boolean => httpStatusOf(err) === 404;
/** 409: a Conflict (a stale resourceVersion) or, on a create, AlreadyExists. */
export const isConflict = (err: unknown): boolean => httpStatusOf(err) === 409;
/** 410 Gone: a watch or list from a compacted resourceVersion. */
export const isGone = (err: unknown): boolean => httpStatusOf(err) === 410;
/** 422 Invalid. */
export const isInvalid = (err: unknown): boolean => httpStatusOf(err) === 422;

/** 401 Unauthorized or 403 Forbidden: retrying will not help until someone fixes the credentials or RBAC. */
export function isRefused(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status === 401 || status === 403;
}
