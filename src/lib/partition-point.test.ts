import { partitionPoint } from './partition-point.js';

describe('partitionPoint', () => {
  it('finds the lower and upper bounds of a sorted array, and the end of a run from a start', () => {
    const a = [1, 3, 3, 3, 7];
    expect([0, 1, 3, 4, 7, 8].map((v) => partitionPoint(a.length, (i) => a[i]! < v))).toEqual([0, 0, 1, 4, 4, 5]);
    expect([0, 1, 3, 4, 7, 8].map((v) => partitionPoint(a.length, (i) => a[i]! <= v))).toEqual([0, 1, 4, 4, 5, 5]);
    const keys = ['/a/x', '/b/x', '/b/y', '/c/x'];
    expect(partitionPoint(keys.length, (i) => keys[i]!.startsWith('/b/'), 1)).toBe(3);
    expect(partitionPoint(0, () => true)).toBe(0);
  });
});
