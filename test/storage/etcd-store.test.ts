/**
 * What the EtcdStore does beyond the Store contract: compaction as kube-apiserver's compactor (replicas
 * take turns, old revisions then give 410 Expired through the API), and etcd's progress notifications
 * reaching watchers and becoming bookmarks.
 */
import { jest } from '@jest/globals';
import { Etcd3 } from 'etcd3';
import { Registry } from 'prom-client';
import type { KObject } from '../../src/api/meta.js';
import { EtcdStore } from '../../src/apiserver/storage/etcd/etcd.js';
import { EtcdMetrics } from '../../src/apiserver/storage/etcd/etcd-metrics.js';
import { compactJson } from '../../src/lib/frozen-json.js';
import { h2WatchTransport } from '../../src/apiserver/storage/etcd/watch-transport.js';
import type { WatchResponse } from '../../src/apiserver/storage/etcd/watch-proto.js';
import { StoreError, type Store, type StoreEvent } from '../../src/apiserver/storage/store.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { trackHandles } from '../helpers/handles.js';
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { describeWithTools } from '../helpers/tools.js';

const obj = (name: string): KObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describeWithTools(['etcd'])('EtcdStore on a real etcd', () => {
  let etcd: EtcdCluster;
  const stores: Store[] = [];
  const open = async (opts: Partial<Parameters<typeof EtcdStore.open>[0]> = {}): Promise<EtcdStore> => {
    const store = await EtcdStore.open({ endpoints: etcd.endpoints, ...opts });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    etcd = await startEtcd({ progressNotifyInterval: '300ms' });
  }, 30_000);
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  afterAll(async () => {
    await etcd?.stop();
  });

  it('compacts about once per interval however many replicas run, and old revisions then give Compacted', async () => {
    const interval = 400;
    const [a, b] = [await open({ prefix: '/compact', compactionIntervalMs: interval }), await open({ prefix: '/compact', compactionIntervalMs: interval })];
    const started = Date.now();
    for (let i = 0; i < 5; i++) await a!.create(`/r/k${i}`, obj(`k${i}`));
    const written = a!.currentRevision();
    await until('a compaction past the writes', () => a!.compactedRevision() >= written && b!.compactedRevision() >= written);

    const client = new Etcd3({ hosts: etcd.endpoints });
    try {
      const kv = (await client.kv.range({ key: Buffer.from('compact_rev_key') })).kvs[0];
      const intervals = (Date.now() - started) / interval;
      // Each replica's step is one version bump only when it won the turn.
      expect(Number(kv?.version)).toBeLessThanOrEqual(Math.ceil(intervals) + 2);
    } finally {
      client.close();
    }
    const err = await b!.range({ prefix: '/r/', revision: written - 1 }).catch((e: unknown) => e);
    expect([(err as StoreError).code, (err as StoreError).revision]).toEqual(['Compacted', b!.compactedRevision()]);
  }, 30_000);

  it('keeps its newest copy of each key for updates without a read: a stale copy only costs a Conflict, which brings the newest', async () => {
    const registry = new Registry();
    const a = await open({ prefix: '/cached', metrics: new EtcdMetrics(registry) });
    const b = await open({ prefix: '/cached' });
    const key = '/registry/core/configmaps/ns/x';
    const made = await a.create(key, obj('x'));
    expect(a.cached(key)).toEqual(made);
    const other = await b.update(key, { ...obj('x'), data: { v: '2' } }, made.revision);
    // a has not seen b's write: its copy is stale, and the compare-and-swap says so.
    expect(a.cached(key)?.revision).toBe(made.revision);
    const lost = await a.update(key, obj('x'), made.revision).catch((e: unknown) => e);
    expect([(lost as StoreError).code, (lost as StoreError).revision]).toEqual(['Conflict', other.revision]);
    expect(a.cached(key)).toEqual(other);
    const mine = await a.update(key, { ...obj('x'), data: { v: '3' } }, other.revision);
    expect(a.cached(key)).toEqual(mine);
    await b.delete(key, mine.revision);
    const gone = await a.update(key, obj('x'), mine.revision).catch((e: unknown) => e);
    expect((gone as StoreError).code).toBe('KeyNotFound');
    expect(a.cached(key)).toBeUndefined();
    // Not one read of etcd on a's side.
    expect(await registry.metrics()).not.toMatch(/^etcd_requests_total\{operation="get"/m);
  });

  it('decodes each value once for every watch and read that sees it, and its watches keep its copies current', async () => {
    const a = await open({ prefix: '/once' });
    const b = await open({ prefix: '/once' });
    const key = '/registry/core/configmaps/ns/y';
    const seen: StoreEvent[][] = [[], []];
    for (const list of seen) a.watch('/registry/core/configmaps/', { fromRevision: a.currentRevision(), onEvent: (e) => list.push(e) });
    const v1 = await b.create(key, obj('y'));
    const v2 = await b.update(key, { ...obj('y'), data: { v: '2' } }, v1.revision);
    await until('both watches to see both writes', () => seen.every((list) => list.length === 2));
    const [first, second] = seen as [StoreEvent[], StoreEvent[]];
    expect(first.map((e) => [e.type, e.revision])).toEqual([['ADDED', v1.revision], ['MODIFIED', v2.revision]]);
    expect(second[0]!.object).toBe(first[0]!.object);
    expect(second[1]!.object).toBe(first[1]!.object);
    expect(first[1]!.prevObject).toBe(first[0]!.object);
    expect(second[1]!.prevObject).toBe(first[0]!.object);
    expect((await a.get(key))?.object).toBe(first[1]!.object);
    expect(a.cached(key)?.revision).toBe(v2.revision);
    await b.delete(key, v2.revision);
    await until('both watches to see the delete', () => seen.every((list) => list.length === 3));
    expect(first[2]!.object.metadata?.resourceVersion).toBe(String(first[2]!.revision));
    expect(first[2]!.object.data).toEqual({ v: '2' });
    expect(a.cached(key)).toBeUndefined();
  });

  it('relays what it watches to a watcher that takes text, parsing a value only when something reads it, once', async () => {
    const a = await open({ prefix: '/relay' });
    const b = await open({ prefix: '/relay' });
    const key = '/registry/core/configmaps/ns/r';
    const onA: StoreEvent[] = [];
    const onB: StoreEvent[] = [];
    a.watch('/registry/core/configmaps/', { fromRevision: a.currentRevision(), onEvent: (e) => onA.push(e), relay: true });
    b.watch('/registry/core/configmaps/', { fromRevision: b.currentRevision(), onEvent: (e) => onB.push(e), relay: true });
    const parse = jest.spyOn(JSON, 'parse');
    const parsed = (): number => parse.mock.calls.filter(([t]) => typeof t === 'string' && t.includes('"name":"r"')).length;
    try {
      const v1 = await b.create(key, { ...obj('r'), data: { v: '1' } }, { handOver: true });
      const v2 = await b.update(key, { ...obj('r'), data: { v: '2' } }, v1.revision, { handOver: true });
      await until('both watches to see both writes', () => onA.length === 2 && onB.length === 2);
      // The writer adopted its own objects, and the other replica parsed nothing.
      expect(parsed()).toBe(0);
      expect(onA.map((e) => [e.type, e.revision, e.text])).toEqual([
        ['ADDED', v1.revision, compactJson(v1.object)],
        ['MODIFIED', v2.revision, compactJson(v2.object)],
      ]);
      // On the writer's replica an event that came after the write's reply carries the object the write
      // returned (its text is that object's), one that came before carries its text; either way the
      // objects are the very ones the writes returned.
      expect(onB.map((e) => [e.type, e.revision, e.text ?? compactJson(e.object)])).toEqual([
        ['ADDED', v1.revision, compactJson(v1.object)],
        ['MODIFIED', v2.revision, compactJson(v2.object)],
      ]);
      expect([onB[0]!.object, onB[1]!.object, onB[1]!.prevObject]).toEqual([v1.object, v2.object, v1.object]);
      expect(onB[1]!.object).toBe(v2.object);
      // On the other, each value is parsed when first read, and shared from then on.
      expect(onA[1]!.object).toEqual(v2.object);
      expect(onA[1]!.prevObject).toBe(onA[0]!.object);
      expect(a.cached(key)?.object).toBe(onA[1]!.object);
      expect(parsed()).toBe(2);
    } finally {
      parse.mockRestore();
    }
  });

  it("gives updates and deletes their previous state from what its watch delivered, reading etcd only for a key it had not seen", async () => {
    const registry = new Registry();
    const a = await open({ prefix: '/prev' });
    const b = await open({ prefix: '/prev', metrics: new EtcdMetrics(registry) });
    const key = (n: string): string => `/registry/core/configmaps/ns/${n}`;
    const reads = async (): Promise<number> => Number((await registry.metrics()).match(/^etcd_requests_total\{operation="get",type="configmaps"\} (\d+)$/m)?.[1] ?? 0);
    const v1 = await a.create(key('k'), { ...obj('k'), data: { v: '1' } });
    const v2 = await a.update(key('k'), { ...obj('k'), data: { v: '2' } }, v1.revision);
    const other = await a.create(key('other'), { ...obj('other'), data: { v: 'o' } });
    const seen: StoreEvent[] = [];
    b.watch('/registry/core/configmaps/', { fromRevision: other.revision, onEvent: (e) => seen.push(e) });

    // Changed before b's watch started, and never read by b: its previous state is read at the revision before.
    const v3 = await a.update(key('k'), { ...obj('k'), data: { v: '3' } }, v2.revision);
    await until('the first update', () => seen.length === 1);
    expect([seen[0]!.type, seen[0]!.prevObject?.data, seen[0]!.prevObject?.metadata?.resourceVersion]).toEqual(['MODIFIED', { v: '2' }, String(v2.revision)]);
    expect(await reads()).toBe(1);
    // From then on the watch delivered the previous state itself.
    const v4 = await a.update(key('k'), { ...obj('k'), data: { v: '4' } }, v3.revision);
    await a.delete(key('k'), v4.revision);
    await until('the second update and the delete', () => seen.length === 3);
    expect(seen[1]!.prevObject).toBe(seen[0]!.object);
    expect([seen[2]!.type, seen[2]!.object.data, seen[2]!.prevObject]).toEqual(['DELETED', { v: '4' }, seen[1]!.object]);
    expect(await reads()).toBe(1);
    // A delete of a key the watch has not seen: its last state is read.
    await a.delete(key('other'), other.revision);
    await until('the delete of the other key', () => seen.length === 4);
    expect([seen[3]!.type, seen[3]!.object.data, seen[3]!.object.metadata?.resourceVersion]).toEqual(['DELETED', { v: 'o' }, String(seen[3]!.revision)]);
    expect(await reads()).toBe(2);

    // A watch replaying what the first one delivered has etcd send previous values instead.
    const replayed: StoreEvent[] = [];
    b.watch('/registry/core/configmaps/', { fromRevision: other.revision, onEvent: (e) => replayed.push(e) });
    await until('the replay', () => replayed.length === 4);
    expect(replayed.map((e) => [e.type, e.prevObject?.data])).toEqual([
      ['MODIFIED', { v: '2' }],
      ['MODIFIED', { v: '3' }],
      ['DELETED', { v: '4' }],
      ['DELETED', { v: 'o' }],
    ]);
    expect(await reads()).toBe(2);
  });

  it('reads no previous state for a key that a list showed current at the revision the watch started from', async () => {
    const registry = new Registry();
    const a = await open({ prefix: '/prevlist' });
    const b = await open({ prefix: '/prevlist', metrics: new EtcdMetrics(registry) });
    const key = '/registry/core/configmaps/ns/l';
    const reads = async (): Promise<number> => Number((await registry.metrics()).match(/^etcd_requests_total\{operation="get",type="configmaps"\} (\d+)$/m)?.[1] ?? 0);
    const v1 = await a.create(key, obj('l'));
    const v2 = await a.update(key, { ...obj('l'), data: { v: '2' } }, v1.revision);
    await a.create('/registry/core/configmaps/ns/after', obj('after'));
    // An informer's list then watch: the key was last written before the list's revision.
    const list = await b.range({ prefix: '/registry/core/configmaps/' });
    const listed = list.items.find((i) => i.key === key)!;
    expect([listed.revision, list.revision > v2.revision]).toEqual([v2.revision, true]);
    const seen: StoreEvent[] = [];
    b.watch('/registry/core/configmaps/', { fromRevision: list.revision, onEvent: (e) => seen.push(e) });
    const v3 = await a.update(key, { ...obj('l'), data: { v: '3' } }, v2.revision);
    await a.delete('/registry/core/configmaps/ns/after');
    await until('the update and the delete', () => seen.length === 2);
    expect(seen[0]!.prevObject).toBe(listed.object);
    expect([seen[1]!.type, seen[1]!.object.metadata?.name]).toEqual(['DELETED', 'after']);
    expect(await reads()).toBe(0);

    // A watch from before the key's last write cannot vouch for it being the listed state: it reads once.
    const older: StoreEvent[] = [];
    b.watch('/registry/core/configmaps/ns/', { fromRevision: v1.revision, onEvent: (e) => older.push(e) });
    await until('the older watch to replay', () => older.length === 4);
    expect(older.map((e) => [e.type, e.revision, e.prevObject?.metadata?.resourceVersion])).toEqual([
      ['MODIFIED', v2.revision, String(v1.revision)],
      ['ADDED', v2.revision + 1, undefined],
      ['MODIFIED', v3.revision, String(v2.revision)],
      ['DELETED', v3.revision + 1, String(v2.revision + 1)],
    ]);
    expect(await reads()).toBe(1);
  });

  it('ends a watch with Compacted when the state before an event it must read was compacted meanwhile', async () => {
    let hold = false;
    const held: (() => void)[] = [];
    const b = await open({
      prefix: '/prevgone',
      watchTransport: (opts) => {
        const inner = h2WatchTransport(opts);
        return {
          open: () => {
            const opened = inner.open();
            const on = opened.call.on.bind(opened.call) as (event: string, listener: (arg: WatchResponse) => void) => void;
            (opened.call as { on: typeof on }).on = (event, listener) =>
              on(event, event === 'data' ? (res) => (hold && res.events.length > 0 ? held.push(() => listener(res)) : listener(res)) : listener);
            return opened;
          },
          close: () => inner.close(),
        };
      },
    });
    const a = await open({ prefix: '/prevgone' });
    const key = '/registry/core/configmaps/ns/gone';
    const v1 = await a.create(key, obj('gone'));
    const errors: StoreError[] = [];
    b.watch('/registry/core/configmaps/', { fromRevision: v1.revision, onEvent: () => undefined, onError: (e) => errors.push(e) });
    hold = true;
    const v2 = await a.update(key, { ...obj('gone'), data: { v: '2' } }, v1.revision);
    await until('the held update event', () => held.length === 1);
    await b.compact(v2.revision);
    for (const deliver of held) deliver();
    await until('the watch to end', () => errors.length === 1);
    expect(errors[0]!.code).toBe('Compacted');
  });

  it('shares one etcd watch among the watches of a prefix that start at or after what it delivered', async () => {
    let creates = 0;
    const a = await open({
      prefix: '/shared',
      watchTransport: (opts) => {
        const inner = h2WatchTransport(opts);
        return {
          open: () => {
            const opened = inner.open();
            const write = opened.call.write.bind(opened.call);
            opened.call.write = (req) => {
              if (req.create_request) creates++;
              write(req);
            };
            return opened;
          },
          close: () => inner.close(),
        };
      },
    });
    const key = (n: string): string => `/registry/core/configmaps/ns/${n}`;
    const start = a.currentRevision();
    const seen: string[][] = [[], [], []];
    const watch = (i: number, from: number) => a.watch('/registry/core/configmaps/', { fromRevision: from, onEvent: (e) => seen[i]!.push(`${e.type} ${e.key}`) });
    watch(0, start);
    watch(1, start);
    const v1 = await a.create(key('one'), obj('one'));
    await until('the first watch to see the write', () => seen[0]!.length === 1);
    // Started after what was delivered: it joins, and sees only what follows its revision.
    watch(2, v1.revision);
    await a.create(key('two'), obj('two'));
    await until('every watch to see the second write', () => seen.every((s) => s.includes(`ADDED ${key('two')}`)));
    expect(creates).toBe(1);
    expect(seen).toEqual([
      [`ADDED ${key('one')}`, `ADDED ${key('two')}`],
      [`ADDED ${key('one')}`, `ADDED ${key('two')}`],
      [`ADDED ${key('two')}`],
    ]);
    // From before what the shared watch delivered: a watch of its own, which replays from there.
    const late: string[] = [];
    a.watch('/registry/core/configmaps/', { fromRevision: start, onEvent: (e) => late.push(e.key) });
    await until('the late watch to replay both writes', () => late.length === 2);
    expect(creates).toBe(2);
  });

  it("reports each member's database size by its endpoint, for apiserver_storage_db_total_size_in_bytes", async () => {
    const sizes = await (await open({ prefix: '/size' })).sizeBytes();
    expect(sizes.map((s) => s.endpoint)).toEqual(etcd.endpoints);
    for (const size of sizes) expect(size.bytes).toBeGreaterThan(0);
  });

  it('leaves no timer, connection or stream of its own once closed, even with its watch reconnecting to a stopped etcd', async () => {
    const handles = trackHandles();
    const own = await startEtcd();
    try {
      const store = await open({ endpoints: own.endpoints, prefix: '/close' });
      const seen: string[] = [];
      store.watch('/r/', { fromRevision: store.currentRevision(), onEvent: (e) => seen.push(e.key) });
      await store.create('/r/a', obj('a'));
      await until('the watch to deliver the write', () => seen.length === 1);
      await own.stop();
      // The watch keeps trying to reconnect, waiting longer each time (up to 2 s).
      await new Promise((r) => setTimeout(r, 3_000));
      await store.close();
      // Sockets being closed get a moment to finish closing; nothing of the store's may linger after it.
      expect(await handles.settle(1_200)).toEqual([]);
    } finally {
      handles.stop();
      await own.stop();
    }
  });

  it('answers 410 Expired through the API for a watch from a compacted resourceVersion', async () => {
    const store = await open({ prefix: '/expired' });
    const server = await startTestServer({ store });
    try {
      const first = await raw(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'a' } } });
      const old = first.json.metadata.resourceVersion as string;
      await raw(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'b' } } });
      await store.compact(store.currentRevision());
      const watch = await openWatch(server, `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${old}`);
      const [event] = await watch.waitFor(1);
      expect([event.type, event.object.code, event.object.reason]).toEqual(['ERROR', 410, 'Expired']);
      expect(event.object.message).toBe(`too old resource version: ${old} (${store.compactedRevision() - 1})`);
      const list = await raw(server, 'GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${old}&resourceVersionMatch=Exact`);
      expect([list.status, list.json.reason]).toEqual([410, 'Expired']);
    } finally {
      await server.close();
    }
  }, 30_000);

  it('passes etcd progress notifications to watchers, and they move the bookmarks of API watches', async () => {
    const store = await open({ prefix: '/progress' });
    const progress: number[] = [];
    const handle = store.watch('/registry/core/configmaps/', { fromRevision: store.currentRevision(), onEvent: () => undefined, onProgress: (r) => progress.push(r) });
    const other = await store.create('/registry/core/secrets/ns/s', obj('s'));
    await until('a progress notification past the other write', () => progress.some((r) => r >= other.revision));
    handle.stop();

    const server = await startTestServer({ store: await open({ prefix: '/progress' }), bookmarkIntervalMs: 200 });
    try {
      const list = await raw(server, 'GET', '/api/v1/namespaces/default/configmaps');
      const watch = await openWatch(server, `/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=${list.json.metadata.resourceVersion}`);
      const secret = await raw(server, 'POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'unrelated' } } });
      const rv = Number(secret.json.metadata.resourceVersion);
      await until('a bookmark past the unrelated write', () =>
        watch.events.some((e: { type: string; object: { metadata: { resourceVersion: string } } }) => e.type === 'BOOKMARK' && Number(e.object.metadata.resourceVersion) >= rv),
      );
      watch.close();
    } finally {
      await server.close();
    }
  }, 30_000);
});
