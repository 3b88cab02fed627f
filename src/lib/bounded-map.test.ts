import { BoundedMap } from './bounded-map.js';

it('forgets the oldest entry past its limit, and an overwrite evicts nothing', () => {
  const m = new BoundedMap<string, number>(2);
  m.set('a', 1).set('b', 2).set('a', 3);
  expect([...m.entries()]).toEqual([['a', 3], ['b', 2]]);
  m.set('c', 4);
  expect([...m.keys()]).toEqual(['b', 'c']);
});
