import type { KObject } from '../../api/meta.js';
import { MvccIndex } from './mvcc-index.js';
import type { StoredObject } from './store.js';

const object = (name: string): KObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

describe('MvccIndex', () => {
  it('restores more keys than a call can take as arguments, in order', () => {
    const n = 150_000;
    const items: StoredObject[] = [];
    // Written in an order other than the keys' own, as a log read by revision is.
    for (let i = n; i >= 1; i--) items.push({ key: `/r/${i}`, object: object(String(i)), revision: i });
    const index = new MvccIndex(10);
    index.restore(items, [], n);
    expect(index.count('/r/')).toBe(n);
    const page = index.range({ prefix: '/r/', limit: 3 });
    expect(page.items.map((i) => i.key)).toEqual(['/r/1', '/r/10', '/r/100']);
    expect(page.remaining).toBe(n - 3);
  });

  it('keeps keys created in any order, and deleted before or after an ordered read, in key order', () => {
    const index = new MvccIndex(100);
    const write = (op: Parameters<MvccIndex['prepare']>[0]): void => index.apply(index.prepare(op));
    for (const name of ['m', 'c', 'x', 'a']) write({ kind: 'create', key: `/k/${name}`, object: object(name) });
    write({ kind: 'delete', key: '/k/x' });
    expect(index.range({ prefix: '/k/' }).items.map((i) => i.key)).toEqual(['/k/a', '/k/c', '/k/m']);
    for (const name of ['b', 'z']) write({ kind: 'create', key: `/k/${name}`, object: object(name) });
    write({ kind: 'delete', key: '/k/z' });
    write({ kind: 'update', key: '/k/c', object: object('c2') });
    expect(index.range({ prefix: '/k/', after: '/k/a', limit: 2 }).items.map((i) => i.key)).toEqual(['/k/b', '/k/c']);
    expect(index.count('/k/')).toBe(4);
    // The state before the second batch, read after it.
    expect(index.range({ prefix: '/k/', revision: 5 }).items.map((i) => i.key)).toEqual(['/k/a', '/k/c', '/k/m']);
  });
});
