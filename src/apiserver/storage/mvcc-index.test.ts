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

  it("serves a resource's watch from before `compacted` while none of its events is gone, and only then", () => {
    const index = new MvccIndex(5);
    const write = (op: Parameters<MvccIndex['prepare']>[0]): void => index.apply(index.prepare(op));
    const CM = '/registry/core/configmaps/';
    const LEASES = '/registry/coordination.k8s.io/leases/';
    write({ kind: 'create', key: `${CM}ns/a`, object: object('a') });
    for (let i = 0; i < 11; i++) write({ kind: 'create', key: `${LEASES}ns/l${i}`, object: object(`l${i}`) });
    // Revisions 1..12 written, 8..12 kept: the ConfigMap's create (1) and leases 2..7 are gone.
    expect(index.compactedRevision()).toBe(7);
    expect(index.eventsAfter(1, CM)).toEqual([]);
    expect(index.eventsAfter(1, `${CM}ns/`)).toEqual([]);
    const compacted = (from: number, prefix: string): unknown => {
      try {
        index.eventsAfter(from, prefix);
        return 'served';
      } catch (err) {
        return [(err as { code: string }).code, (err as { revision: number }).revision];
      }
    };
    expect(compacted(0, CM)).toEqual(['Compacted', 1]);
    expect(compacted(6, LEASES)).toEqual(['Compacted', 7]);
    expect(index.eventsAfter(7, LEASES).map((e) => e.revision)).toEqual([8, 9, 10, 11, 12]);
    // Wider than one resource: the history as a whole.
    expect(compacted(1, '/registry/')).toEqual(['Compacted', 7]);
    write({ kind: 'update', key: `${CM}ns/a`, object: object('a2') });
    expect(index.eventsAfter(1, CM).map((e) => [e.type, e.revision])).toEqual([['MODIFIED', 13]]);

    // Restored from a log that begins after 7, nothing is known before it, for any resource.
    const restored = new MvccIndex(5);
    const kept = index.eventsAfter(8, '/registry/');
    restored.restore([], kept, 13);
    expect(restored.compactedRevision()).toBe(8);
    expect(() => restored.eventsAfter(1, CM)).toThrow(expect.objectContaining({ code: 'Compacted', revision: 8 }));
  });
});

