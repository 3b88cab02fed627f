import { SortedKeys } from './sorted-keys.js';

describe('SortedKeys', () => {
  it('matches a sorted set through any interleaving of adds, removes, re-adds and reads', () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const live = new Set<string>();
    const keys = new SortedKeys((k) => live.has(k));
    for (let step = 0; step < 5000; step++) {
      const key = `/r/${String.fromCharCode(97 + rand(26))}${rand(40)}`;
      const op = rand(10);
      if (op < 5 && !live.has(key)) {
        live.add(key);
        keys.add(key);
      } else if (op < 8 && live.has(key)) {
        live.delete(key);
        keys.remove();
      } else if (op === 9) {
        expect(keys.view()).toEqual([...live].sort());
      }
    }
    expect(keys.view()).toEqual([...live].sort());
  });

  it('orders by UTF-16 code units, as JS string comparison does', () => {
    const live = new Set(['/b', '/a/z', '/a/\u00e9', '/a/B', '/a']);
    const keys = new SortedKeys((k) => live.has(k));
    for (const k of live) keys.add(k);
    expect(keys.view()).toEqual(['/a', '/a/B', '/a/z', '/a/\u00e9', '/b']);
  });
});
