import { MAX_RETRY_AFTER_SECONDS, RetryAfter } from './retry-after.js';

/** A RetryAfter on a clock the test sets, in whole seconds. */
function tracker(): { ra: RetryAfter; at: (second: number) => void } {
  let now = 0;
  return { ra: new RetryAfter(() => now), at: (second) => (now = second * 1000 + 250) };
}

/** Sheds `n` requests of `level` and returns what each was told. */
const shedMany = (ra: RetryAfter, level: string, n: number): number[] => Array.from({ length: n }, () => ra.shed(level));

describe('the Retry-After of shed requests', () => {
  it('doubles once per spike of at least three times its value, then falls back a second at a time', () => {
    const { ra, at } = tracker();
    at(100);
    expect(shedMany(ra, 'workload', 4)).toEqual([1, 1, 1, 1]);
    // The first shed of a new second looks at the second before: 4 ≥ 3 × 1, so 2 from now on.
    at(101);
    expect(shedMany(ra, 'workload', 7)).toEqual([2, 2, 2, 2, 2, 2, 2]);
    // 11 in the last 2 s, but it doubled only a second ago: one spike doubles it once.
    at(102);
    expect(ra.shed('workload')).toBe(2);
    // 8 in the last 2 s (101 and 102), 2 s after the last doubling: 4.
    at(103);
    expect(ra.shed('workload')).toBe(4);
    // Quiet since: fewer than the value in the seconds it looks back, one second less each time.
    at(110);
    expect(ra.shed('workload')).toBe(3);
    at(111);
    expect(ra.shed('workload')).toBe(2);
    // Two in the last 2 s (110, 111) is not fewer than 2: it stays.
    at(112);
    expect(ra.shed('workload')).toBe(2);
    at(120);
    expect(ra.shed('workload')).toBe(1);
  });

  it('never tells more than 32 s, however long the storm', () => {
    const { ra, at } = tracker();
    const told: number[] = [];
    for (let second = 0; second < 120; second++) {
      at(1_000 + second);
      told.push(...shedMany(ra, 'workload', 200));
    }
    expect(Math.max(...told)).toBe(MAX_RETRY_AFTER_SECONDS);
    expect(told.at(-1)).toBe(MAX_RETRY_AFTER_SECONDS);
    // Each step at most doubles the one before.
    for (let i = 1; i < told.length; i++) expect(told[i]!).toBeLessThanOrEqual(2 * told[i - 1]!);
  });

  it('is kept per priority level: a storm at one level leaves another at 1 s', () => {
    const { ra, at } = tracker();
    at(5);
    shedMany(ra, 'workload', 50);
    at(6);
    expect(ra.shed('workload')).toBe(2);
    expect(ra.shed('node-high')).toBe(1);
    at(7);
    expect(ra.shed('node-high')).toBe(1);
  });
});
