/**
 * Behaviour every Store backend must share (the etcd-shaped contract in store.ts), run against
 * each built-in backend and against a real etcd started by the suite.
 *
 * Revisions are written relative to `base`, the revision of the store when it was opened: 0 for
 * the built-in backends, and whatever the shared etcd has reached for the etcd one (each test gets
 * a fresh key prefix in it). etcd compacts on request rather than by a history limit, so the
 * compaction test compacts through `compactTo`, which the built-in backends do on their own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KObject } from '../../api/meta.js';
import { startEtcd, type EtcdCluster } from '../../../test/helpers/etcd.js';
import { prng } from '../../../test/helpers/prng.js';
import { describeWithTools } from '../../../test/helpers/tools.js';
import { EtcdStore } from './etcd/etcd.js';
import { MemoryStore } from './memory/memory.js';
import { SqliteStore } from './sqlite/sqlite.js';
import { StoreError, type Store, type StoreEvent } from './store.js';

type Factory = (historyLimit?: number) => Store | Promise<Store>;
/** Makes the store keep history only from `revision` on (built-in backends: their history limit does). */
type CompactTo = (store: Store, revision: number) => Promise<void>;

const dirs: string[] = [];
const backends: [string, Factory][] = [
  ['memory', (historyLimit) => new MemoryStore({ historyLimit })],
  [
    'sqlite',
    (historyLimit) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'store-conformance-'));
      dirs.push(dir);
      return SqliteStore.open(path.join(dir, 'state.db'), { historyLimit });
    },
  ],
];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function obj(name: string, data: Record<string, unknown> = {}): KObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };
}

/** Lets queued watch deliveries (microtasks) run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Waits until `done()` holds: watch events from a store across the network arrive when they arrive. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

function watchAll(store: Store, prefix: string, fromRevision: number) {
  const events: StoreEvent[] = [];
  const errors: StoreError[] = [];
  const handle = store.watch(prefix, { fromRevision, onEvent: (e) => events.push(e), onError: (e) => errors.push(e) });
  return { events, errors, handle };
}

async function expectStoreError(promise: Promise<unknown>, code: string): Promise<StoreError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreError);
  expect((err as StoreError).code).toBe(code);
  return err as StoreError;
}

describe.each(backends)('%s store', (_name, open) => conformance(open, async () => undefined));

describeWithTools(['etcd'])('etcd store', () => {
  let etcd: EtcdCluster;
  let prefixes = 0;
  beforeAll(async () => {
    etcd = await startEtcd();
  }, 30_000);
  afterAll(async () => {
    await etcd.stop();
  });
  conformance(
    () => EtcdStore.open({ endpoints: etcd.endpoints, prefix: `/conformance-${++prefixes}` }),
    (store, revision) => (store as EtcdStore).compact(revision),
  );
});

function conformance(open: Factory, compactTo: CompactTo): void {
  let store: Store;
  let base: number;
  beforeEach(async () => {
    store = await open();
    base = store.currentRevision();
  });
  afterEach(async () => {
    await store.close();
  });

  it('creates, gets, updates and deletes with resourceVersion set to the revision', async () => {
    expect(store.currentRevision()).toBe(base);
    const input = obj('a', { x: '1' });
    const created = await store.create('/r/a', input);
    expect(created.revision).toBe(base + 1);
    expect(created.object.metadata?.resourceVersion).toBe(String(base + 1));
    expect(input.metadata?.resourceVersion).toBeUndefined();
    (input.data as Record<string, string>).x = 'changed';
    const got = await store.get('/r/a');
    expect(got?.object.data).toEqual({ x: '1' });
    expect(Object.isFrozen(got?.object)).toBe(true);
    expect(Object.isFrozen(got?.object.metadata)).toBe(true);

    const updated = await store.update('/r/a', { ...obj('a', { x: '2' }), metadata: { name: 'a', resourceVersion: '99' } });
    expect(updated.revision).toBe(base + 2);
    expect(updated.object.metadata?.resourceVersion).toBe(String(base + 2));
    expect((await store.get('/r/a'))?.object.data).toEqual({ x: '2' });

    const deleted = await store.delete('/r/a');
    expect(deleted.revision).toBe(base + 3);
    expect(deleted.object.metadata?.resourceVersion).toBe(String(base + 3));
    expect(deleted.object.data).toEqual({ x: '2' });
    expect(await store.get('/r/a')).toBeUndefined();
    expect(store.currentRevision()).toBe(base + 3);
  });

  it('stores a handed-over object as its JSON text reads back, frozen, and leaves a refused one as it was', async () => {
    const when = new Date('2026-01-02T03:04:05Z');
    const odd = { ...obj('odd', { x: '1', gone: undefined }), metadata: { name: 'odd', labels: undefined }, spec: { at: when, n: -0, list: ['a', 'b'] } } as unknown as KObject;
    const expected = JSON.parse(JSON.stringify({ ...odd, metadata: { name: 'odd', resourceVersion: String(base + 1) } })) as KObject;
    const created = await store.create('/h/odd', odd, { handOver: true });
    expect(created.object).toStrictEqual(expected);
    expect((await store.get('/h/odd'))?.object).toStrictEqual(expected);

    const plain = obj('plain', { x: '1', nested: { list: [{ a: 1 }, null, true] } });
    const stored = (await store.create('/h/plain', plain, { handOver: true })).object;
    const plainExpected = JSON.parse(JSON.stringify({ ...obj('plain', { x: '1', nested: { list: [{ a: 1 }, null, true] } }), metadata: { name: 'plain', resourceVersion: String(base + 2) } })) as KObject;
    expect(stored).toStrictEqual(plainExpected);
    const nested = (stored.data as { nested: { list: object[] } }).nested;
    for (const part of [stored, stored.metadata, stored.data, nested, nested.list, nested.list[0]]) expect(Object.isFrozen(part)).toBe(true);
    expect((await store.update('/h/plain', { ...stored, data: { x: '2' } }, undefined, { handOver: true })).object.data).toStrictEqual({ x: '2' });

    const taken = obj('plain', { y: '1' });
    await expectStoreError(store.create('/h/plain', taken, { handOver: true }), 'KeyExists');
    const stale = obj('plain', { y: '2' });
    await expectStoreError(store.update('/h/plain', stale, base + 1, { handOver: true }), 'Conflict');
    for (const refused of [taken, stale]) {
      expect(Object.isFrozen(refused.data)).toBe(false);
      expect(refused.metadata?.resourceVersion).toBeUndefined();
    }
    expect(store.currentRevision()).toBe(base + 3);
  });

  it('reports KeyExists, KeyNotFound and CAS Conflict without consuming a revision', async () => {
    await store.create('/r/a', obj('a'));
    await expectStoreError(store.create('/r/a', obj('a')), 'KeyExists');
    await expectStoreError(store.update('/r/b', obj('b')), 'KeyNotFound');
    await expectStoreError(store.delete('/r/b'), 'KeyNotFound');
    await store.update('/r/a', obj('a', { v: '2' }), base + 1);
    const conflict = await expectStoreError(store.update('/r/a', obj('a', { v: '3' }), base + 1), 'Conflict');
    expect(conflict.revision).toBe(base + 2);
    await expectStoreError(store.delete('/r/a', base + 1), 'Conflict');
    expect(store.currentRevision()).toBe(base + 2);
    expect((await store.get('/r/a'))?.object.data).toEqual({ v: '2' });
    expect((await store.delete('/r/a', base + 2)).revision).toBe(base + 3);
  });

  it('ranges by prefix in key order with after, limit and remaining', async () => {
    for (const name of ['c', 'a', 'e', 'b', 'd']) await store.create(`/r/ns/${name}`, obj(name));
    await store.create('/r/ns2/a', obj('other'));
    await store.create('/r/n', obj('n'));
    const all = await store.range({ prefix: '/r/ns/' });
    expect(all.items.map((i) => i.key)).toEqual(['/r/ns/a', '/r/ns/b', '/r/ns/c', '/r/ns/d', '/r/ns/e']);
    expect(all).toMatchObject({ revision: base + 7, remaining: 0 });
    expect(all.items[2]?.revision).toBe(base + 1);
    expect(all.items[2]?.object.metadata?.resourceVersion).toBe(String(base + 1));

    const page1 = await store.range({ prefix: '/r/ns/', limit: 2 });
    expect(page1.items.map((i) => i.key)).toEqual(['/r/ns/a', '/r/ns/b']);
    expect(page1.remaining).toBe(3);
    const page2 = await store.range({ prefix: '/r/ns/', limit: 2, after: '/r/ns/b' });
    expect(page2.items.map((i) => i.key)).toEqual(['/r/ns/c', '/r/ns/d']);
    expect(page2.remaining).toBe(1);
    const page3 = await store.range({ prefix: '/r/ns/', limit: 2, after: '/r/ns/d' });
    expect(page3.items.map((i) => i.key)).toEqual(['/r/ns/e']);
    expect(page3.remaining).toBe(0);
    expect((await store.range({ prefix: '/r/ns/', after: '/r/ns/bb' })).items.map((i) => i.key)).toEqual([
      '/r/ns/c',
      '/r/ns/d',
      '/r/ns/e',
    ]);
    expect((await store.range({ prefix: '/r/none/' })).items).toEqual([]);
    expect([await store.count('/r/ns/'), await store.count('/r/'), await store.count('/r/none/')]).toEqual([5, 7, 0]);
  });

  it('ranges at an old revision after later updates, deletes and creates', async () => {
    await store.create('/r/a', obj('a', { v: 'a1' }));
    await store.create('/r/b', obj('b', { v: 'b1' }));
    await store.create('/r/c', obj('c', { v: 'c1' }));
    const snapshot = store.currentRevision();
    await store.update('/r/a', obj('a', { v: 'a2' }));
    await store.delete('/r/b');
    await store.create('/r/aa', obj('aa'));
    await store.update('/r/a', obj('a', { v: 'a3' }));
    await store.create('/r/b', obj('b', { v: 'b2' }));

    const page1 = await store.range({ prefix: '/r/', revision: snapshot, limit: 2 });
    expect(page1.revision).toBe(snapshot);
    expect(page1.items.map((i) => [i.key, i.object.data, i.revision - base, Number(i.object.metadata?.resourceVersion) - base])).toEqual([
      ['/r/a', { v: 'a1' }, 1, 1],
      ['/r/b', { v: 'b1' }, 2, 2],
    ]);
    expect(page1.remaining).toBe(1);
    const page2 = await store.range({ prefix: '/r/', revision: snapshot, after: '/r/b' });
    expect(page2.items.map((i) => [i.key, i.object.data])).toEqual([['/r/c', { v: 'c1' }]]);
    expect((await store.range({ prefix: '/r/', revision: base + 5 })).items.map((i) => i.key)).toEqual(['/r/a', '/r/c']);
    expect((await store.range({ prefix: '/r/' })).items.map((i) => i.key)).toEqual(['/r/a', '/r/aa', '/r/b', '/r/c']);
    await expectStoreError(store.range({ prefix: '/r/', revision: store.currentRevision() + 1 }), 'FutureRevision');
  });

  it('matches a model of the history at every kept revision', async () => {
    const random = prng(42);
    const states: Map<string, string>[] = [new Map()];
    const model = new Map<string, string>();
    for (let i = 0; i < 300; i++) {
      const key = `/m/${Math.floor(random() * 12)
        .toString()
        .padStart(2, '0')}`;
      const value = String(i);
      if (!model.has(key)) await store.create(key, obj(key, { value }));
      else if (random() < 0.3) await store.delete(key);
      else await store.update(key, obj(key, { value }));
      if (model.has(key) && (await store.get(key)) === undefined) model.delete(key);
      else model.set(key, value);
      states.push(new Map(model));
      // Ordered reads between writes: creates, deletes and reads interleave in every order.
      if (i % 3 === 0) {
        const keys = [...model.keys()].sort();
        expect((await store.range({ prefix: '/m/' })).items.map((item) => item.key)).toEqual(keys);
        expect(await store.count('/m/')).toBe(keys.length);
        const [, second] = keys;
        if (second !== undefined) {
          const page = await store.range({ prefix: '/m/', after: second, limit: 2 });
          expect(page.items.map((item) => item.key)).toEqual(keys.slice(2, 4));
          expect(page.remaining).toBe(Math.max(0, keys.length - 4));
        }
      }
    }
    for (let rev = 1; rev <= store.currentRevision() - base; rev += 7) {
      const seen = new Map<string, string>();
      let after: string | undefined;
      for (;;) {
        const page = await store.range({ prefix: '/m/', revision: base + rev, after, limit: 5 });
        for (const item of page.items) seen.set(item.key, (item.object.data as { value: string }).value);
        after = page.items.at(-1)?.key;
        if (page.remaining === 0) break;
      }
      expect(seen).toEqual(states[rev]);
    }
  });

  it('keeps revisions strictly increasing across prefixes, kinds and deletes of the newest key', async () => {
    const revisions: number[] = [];
    revisions.push((await store.create('/registry/core/secrets/ns/a', obj('a'))).revision);
    revisions.push((await store.create('/registry/coordination.k8s.io/leases/ns/a', obj('a'))).revision);
    revisions.push((await store.update('/registry/core/secrets/ns/a', obj('a', { v: '1' }))).revision);
    revisions.push((await store.delete('/registry/coordination.k8s.io/leases/ns/a')).revision);
    revisions.push((await store.create('/registry/coordination.k8s.io/leases/ns/a', obj('a'))).revision);
    expect(revisions.map((r) => r - base)).toEqual([1, 2, 3, 4, 5]);
  });

  it('reports Compacted for revisions older than the kept history, for range and watch', async () => {
    await store.close();
    store = await open(5);
    base = store.currentRevision();
    for (let i = 0; i < 12; i++) await store.create(`/r/k${i}`, obj(`k${i}`));
    await compactTo(store, base + 7);
    expect(store.compactedRevision()).toBe(base + 7);
    const err = await expectStoreError(store.range({ prefix: '/r/', revision: base + 6 }), 'Compacted');
    expect(err.revision).toBe(base + 7);
    expect((await store.range({ prefix: '/r/', revision: base + 7 })).items).toHaveLength(7);

    const old = watchAll(store, '/r/', base + 6);
    const ok = watchAll(store, '/r/', base + 7);
    expect(old.errors).toEqual([]);
    await until(() => old.errors.length > 0);
    expect(old.errors.map((e) => [e.code, e.revision])).toEqual([['Compacted', base + 7]]);
    expect(old.events).toEqual([]);
    expect(ok.errors).toEqual([]);
    await until(() => ok.events.length >= 5);
    expect(ok.events.map((e) => e.revision - base)).toEqual([8, 9, 10, 11, 12]);
    ok.handle.stop();
  });

  it('replays history after the start revision, then goes live, in order and asynchronously', async () => {
    await store.create('/r/a', obj('a', { v: '1' }));
    const from = store.currentRevision();
    await store.create('/r/b', obj('b'));
    await store.update('/r/a', obj('a', { v: '2' }));
    const w = watchAll(store, '/r/', from);
    expect(w.events).toEqual([]);
    const deleting = store.delete('/r/a');
    expect(w.events).toEqual([]);
    await deleting;
    await settle();
    await store.create('/r/c', obj('c'));
    await until(() => w.events.length >= 4);
    expect(w.events.map((e) => [e.type, e.key, e.revision - base, Number(e.object.metadata?.resourceVersion) - base])).toEqual([
      ['ADDED', '/r/b', 2, 2],
      ['MODIFIED', '/r/a', 3, 3],
      ['DELETED', '/r/a', 4, 4],
      ['ADDED', '/r/c', 5, 5],
    ]);
    expect(w.events[1]?.prevObject?.data).toEqual({ v: '1' });
    expect(w.events[2]?.object.data).toEqual({ v: '2' });
    expect(w.events[2]?.prevObject?.metadata?.resourceVersion).toBe(String(base + 3));
    expect(w.events[0]?.prevObject).toBeUndefined();
    w.handle.stop();
    await store.create('/r/d', obj('d'));
    await settle();
    expect(w.events).toHaveLength(4);
  });

  it('filters watch events by prefix and starts a future-revision watch after that revision', async () => {
    const secrets = watchAll(store, '/registry/core/secrets/', base);
    const future = watchAll(store, '/registry/', base + 2);
    await store.create('/registry/core/secrets/ns/a', obj('a'));
    await store.create('/registry/core/secretsx/ns/a', obj('a'));
    await store.create('/registry/core/configmaps/ns/a', obj('a'));
    await store.update('/registry/core/secrets/ns/a', obj('a', { v: '2' }));
    await until(() => secrets.events.length >= 2 && future.events.length >= 2);
    expect(secrets.events.map((e) => [e.type, e.key, e.revision - base])).toEqual([
      ['ADDED', '/registry/core/secrets/ns/a', 1],
      ['MODIFIED', '/registry/core/secrets/ns/a', 4],
    ]);
    expect(future.events.map((e) => [e.key, e.revision - base])).toEqual([
      ['/registry/core/configmaps/ns/a', 3],
      ['/registry/core/secrets/ns/a', 4],
    ]);
  });

  it('delivers writes made from a watch callback after the events before them, to every watcher', async () => {
    const order: number[][] = [[], []];
    const handles = [0, 1].map((i) =>
      store.watch('/r/', {
        fromRevision: base,
        onEvent: (e) => {
          order[i]!.push(e.revision - base);
          if (i === 0 && e.key === '/r/a') void store.create(`/r/reaction-${e.revision}`, obj('r'));
        },
      }),
    );
    await store.create('/r/a', obj('a'));
    await store.create('/r/b', obj('b'));
    await store.update('/r/a', obj('a', { v: '2' }));
    // The reactions are not awaited: wait until both committed (a durable backend commits asynchronously).
    while (store.currentRevision() < base + 5) await new Promise((resolve) => setTimeout(resolve, 5));
    await until(() => order[0]!.length >= 5 && order[1]!.length >= 5);
    expect(store.currentRevision()).toBe(base + 5);
    expect(order[0]).toEqual([1, 2, 3, 4, 5]);
    expect(order[1]).toEqual([1, 2, 3, 4, 5]);
    for (const h of handles) h.stop();
  });
}
