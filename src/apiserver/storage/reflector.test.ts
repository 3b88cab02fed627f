import type { KObject } from '../../api/meta.js';
import { BreakableStore } from '../../../test/helpers/breakable-store.js';
import { until } from '../../../test/helpers/wait.js';
import { Reflector } from './reflector.js';

const PREFIX = '/registry/configmaps/ns/';
const cm = (name: string, value = ''): KObject => ({ metadata: { name, namespace: 'ns' }, data: { value } }) as KObject;

/** A copy of the prefix as the reflector keeps it: value by key. */
function mirror(store: BreakableStore): { reflector: Reflector; copy: Map<string, string> } {
  const copy = new Map<string, string>();
  const valueOf = (o: KObject): string => String((o as { data?: { value?: string } }).data?.value);
  const reflector = new Reflector(store, PREFIX, {
    replace: (items) => {
      copy.clear();
      for (const item of items) copy.set(item.key, valueOf(item.object));
    },
    apply: (e) => (e.type === 'DELETED' ? copy.delete(e.key) : copy.set(e.key, valueOf(e.object))),
  });
  return { reflector, copy };
}

const ticks = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('the store reflector', () => {
  let store: BreakableStore;
  beforeEach(() => {
    store = new BreakableStore();
  });
  afterEach(() => store.close());

  it('lists the prefix, then follows its writes and only its writes', async () => {
    await store.create(`${PREFIX}a`, cm('a', '1'));
    await store.create('/registry/configmaps/other/a', cm('a', 'x'));
    const { reflector, copy } = mirror(store);
    expect(reflector.synced).toBe(false);
    await until('the reflector synced', () => reflector.synced);
    expect(Object.fromEntries(copy)).toEqual({ [`${PREFIX}a`]: '1' });

    await store.create(`${PREFIX}b`, cm('b', '2'));
    await store.update(`${PREFIX}a`, cm('a', '3'));
    await store.create('/registry/configmaps/other/b', cm('b', 'y'));
    await store.delete(`${PREFIX}b`);
    await Promise.resolve();
    expect(Object.fromEntries(copy)).toEqual({ [`${PREFIX}a`]: '3' });
    reflector.stop();
  });

  it('relists after Compacted, replacing the copy with what the watch missed', async () => {
    await store.create(`${PREFIX}a`, cm('a', '1'));
    const { reflector, copy } = mirror(store);
    await until('the reflector synced', () => reflector.synced);
    store.breakWatches('Compacted');
    expect(reflector.synced).toBe(false);
    await store.delete(`${PREFIX}a`);
    await store.create(`${PREFIX}b`, cm('b', '2'));
    await until('the reflector synced', () => reflector.synced);
    expect([store.ranges, Object.fromEntries(copy)]).toEqual([2, { [`${PREFIX}b`]: '2' }]);
    // The new watch runs from the relist's revision.
    await store.create(`${PREFIX}c`, cm('c', '3'));
    await Promise.resolve();
    expect(copy.get(`${PREFIX}c`)).toBe('3');
    reflector.stop();
  });

  it('waits before relisting after another failure of the watch or of the list', async () => {
    store.failRanges = 1;
    const { reflector, copy } = mirror(store);
    await until('the first list', () => store.ranges === 1);
    // Not retried at once: a failing backend is not hammered.
    await ticks(50);
    expect([store.ranges, reflector.synced]).toEqual([1, false]);
    await until('the reflector synced', () => reflector.synced);
    expect(store.ranges).toBe(2);

    store.breakWatches('Unavailable');
    await store.create(`${PREFIX}a`, cm('a', '1'));
    await ticks(50);
    expect([store.ranges, reflector.synced, copy.size]).toEqual([2, false, 0]);
    await until('the reflector synced', () => reflector.synced);
    expect([store.ranges, Object.fromEntries(copy)]).toEqual([3, { [`${PREFIX}a`]: '1' }]);
    reflector.stop();
  });

  it('stops cleanly: no events, no pending relist, not synced', async () => {
    const { reflector, copy } = mirror(store);
    await until('the reflector synced', () => reflector.synced);
    reflector.stop();
    expect(reflector.synced).toBe(false);
    await store.create(`${PREFIX}a`, cm('a', '1'));
    await Promise.resolve();
    expect(copy.size).toBe(0);

    // Stopped while a relist waits for its delay: the relist never runs.
    const second = mirror(store);
    await until('the second reflector synced', () => second.reflector.synced);
    store.breakWatches('Unavailable');
    second.reflector.stop();
    const ranges = store.ranges;
    await ticks(1100);
    expect([store.ranges, second.reflector.synced]).toEqual([ranges, false]);
  });

  it('stops cleanly while its list is in flight', async () => {
    const { reflector, copy } = mirror(store);
    reflector.stop();
    await store.create(`${PREFIX}a`, cm('a', '1'));
    await ticks(10);
    expect([reflector.synced, copy.size]).toEqual([false, 0]);
  });
});
