/**
 * A value given at once when it is known at once, else a promise of it: the request pipeline's
 * synchronous fast path (issue 29). Each `await` of a request's ~17 async steps cost a promise, a
 * suspended frame and a turn of the microtask queue, although a remembered certificate, decision or
 * token answers without waiting for anything; a step that returns a MaybePromise answers those
 * synchronously and falls back to a promise only where something must really be waited for (a store
 * read, a signature check). The same code decides on both paths, so their answers are the same.
 *
 * A synchronous step may throw: where a caller needs a promise whatever happens, `promised` turns the
 * throw into a rejection.
 */
export type MaybePromise<T> = T | Promise<T>;

/** Whether `v` is still to come. A thenable test, not `instanceof`: a promise of another realm counts too. */
export function isPromise<T>(v: MaybePromise<T>): v is Promise<T> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** `f` of the value: at once when it is one, else once the promise resolves. */
export function then<T, U>(v: MaybePromise<T>, f: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPromise(v) ? v.then(f) : f(v);
}

/** What `f` gives, always as a promise: a synchronous throw becomes a rejection. */
export function promised<T>(f: () => MaybePromise<T>): Promise<T> {
  try {
    return Promise.resolve(f());
  } catch (err) {
    return Promise.reject(err);
  }
}
