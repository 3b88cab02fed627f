/**
 * Binary search: the first index in [lo, hi) at which `before(i)` is false, for a `before` that is
 * true and then false along the range (a sorted array's lower or upper bound, the end of a prefix run).
 */
export function partitionPoint(hi: number, before: (i: number) => boolean, lo = 0): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
