/**
 * Boolean and integer query parameters, converted as kube-apiserver's parameter codec converts them
 * (apimachinery runtime's Convert_Slice_string_To_bool / _int64 / _Pointer_*), so every client's
 * spelling means what it means upstream: the Python client sends `watch=True`, others `watch=1`.
 * Only the first value of a repeated parameter counts, as upstream reads `values[0]`.
 */
import { errors } from './errors.js';

/**
 * Absent: undefined (the caller's default, false for a plain bool). `0` or `false` in any letter
 * case: false. Anything else, the empty string included: true.
 */
export function queryBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * strconv.ParseInt(v, 10, 64): an optional sign and decimal digits; anything else (the empty string
 * too) is a 400 with Go's message, as the parameter codec's error becomes a BadRequest upstream.
 */
export function parseInt64Text(v: string): number {
  if (!/^[+-]?\d+$/.test(v)) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n < INT64_MIN || n > INT64_MAX) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(n);
}

/** An int64 (or *int64) query parameter: undefined when absent, else parsed as ParseInt does. */
export function queryInt64(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  return v === null ? undefined : parseInt64Text(v);
}

/**
 * `pretty` is not a parameter-codec field upstream: the response writer reads it with
 * strconv.ParseBool, a malformed value meaning false and an empty one deferring to the User-Agent.
 */
export function queryPretty(q: URLSearchParams): boolean | undefined {
  const v = q.get('pretty');
  if (v === null || v === '') return undefined;
  return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);
}
