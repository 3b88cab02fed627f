import { Registry } from 'prom-client';
import type { KList, KObject, WatchEvent } from '../../api/meta.js';
import { FakeClock } from '../../lib/clock.js';
import { silentLogger } from '../../log/logger.js';
import { InformerMetrics } from '../../metrics/informer.js';
import { Informer } from './informer.js';
import type { ListOptions, ListWatch, WatchCallbacks, WatchOptions } from './list-watch.js';

const tick = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
const obj = (name: string, rv: string, extra: Record<string, unknown> = {}): KObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv }, ...extra });

/** An in-memory ListWatch the test drives: a current list state and the open watches' callbacks. */
class ScriptedListWatch implements ListWatch {
  items: KObject[] = [];
  rv = '1';
  lists: ListOptions[] = [];
  watches: { opts: WatchOptions; cb: WatchCallbacks<KObject>; stopped: boolean }[] = [];
  listError: unknown;

  async list(opts: ListOptions): Promise<KList> {
    this.lists.push(opts);
    if (this.listError) throw this.listError;
    const start = opts.continue ? Number(opts.continue) : 0;
    const page = this.items.slice(start, start + (opts.limit ?? 500));
    const next = start + page.length < this.items.length ? String(start + page.length) : undefined;
    return { apiVersion: 'v1', kind: 'ThingList', metadata: { resourceVersion: this.rv, continue: next }, items: structuredClone(page) };
  }

  async watch(opts: WatchOptions, cb: WatchCallbacks<KObject>) {
    const w = { opts, cb, stopped: false };
    this.watches.push(w);
    return { stop: () => (w.stopped = true) };
  }

  get last() {
    return this.watches[this.watches.length - 1] as ScriptedListWatch['watches'][number];
  }

  send(ev: WatchEvent): void {
    this.last.cb.onEvent(structuredClone(ev));
  }
}

function setup(opts: { resyncPeriodMs?: number; pageSize?: number } = {}) {
  const clock = new FakeClock(1_000_000);
  const lw = new ScriptedListWatch();
  const registry = new Registry();
  const inf = new Informer({
    name: 'things',
    listWatch: lw,
    clock,
    logger: silentLogger(),
    metrics: InformerMetrics.for(registry),
    bookmarkIntervalMs: 60_000,
    backoffInitialMs: 100,
    backoffMaxMs: 1000,
    random: () => 0,
    indexers: { color: (o) => [String((o as { color?: string }).color ?? '')] },
    ...opts,
  });
  const events: string[] = [];
  inf.addHandlers({
    add: (o) => events.push(`add ${o.metadata?.name}`),
    update: (a, b) => events.push(`update ${b.metadata?.name} ${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
    delete: (o, info) => events.push(`delete ${o.metadata?.name}${info.finalStateUnknown ? ' unknown' : ''} ${o.metadata?.resourceVersion}`),
  });
  const stop = new AbortController();
  return { clock, lw, inf, events, stop, registry, start: () => inf.run(stop.signal) };
}

describe('Informer', () => {
  it('lists in pages, syncs, and watches from the list resourceVersion with bookmarks', async () => {
    const t = setup({ pageSize: 2 });
    t.lw.items = [obj('a', '5', { color: 'red' }), obj('b', '6', { color: 'blue' }), obj('c', '7', { color: 'red' })];
    t.lw.rv = '9';
    const run = t.start();
    await tick();
    expect(t.lw.lists.map((l) => l.continue)).toEqual([undefined, '2']);
    expect(t.inf.hasSynced()).toBe(true);
    expect(t.inf.store.byIndex('color', 'red').map((o) => o.metadata?.name).sort()).toEqual(['a', 'c']);
    expect(t.inf.store.get('ns/a')?.kind).toBe('Thing');
    expect(Object.isFrozen(t.inf.store.get('ns/a')?.metadata)).toBe(true);
    expect(t.lw.last.opts).toMatchObject({ resourceVersion: '9', allowWatchBookmarks: true });
    expect(t.lw.last.opts.timeoutSeconds).toBeGreaterThanOrEqual(300);
    expect(t.lw.last.opts.timeoutSeconds).toBeLessThan(600);
    t.stop.abort();
    await run;
  });

  it('applies watch events and reconnects after an error from the last seen resourceVersion', async () => {
    const t = setup();
    t.lw.items = [obj('a', '5')];
    t.lw.rv = '5';
    const run = t.start();
    await tick();
    t.lw.send({ type: 'ADDED', object: obj('b', '10') });
    t.lw.send({ type: 'MODIFIED', object: obj('a', '11') });
    t.lw.send({ type: 'DELETED', object: obj('b', '12') });
    t.lw.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } });
    t.lw.last.cb.onDone(Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' }));
    await tick();
    expect(t.lw.watches).toHaveLength(1);
    t.clock.advance(100);
    await tick();
    expect(t.lw.watches).toHaveLength(2);
    expect(t.lw.last.opts.resourceVersion).toBe('15');
    expect(t.lw.lists).toHaveLength(1);
    expect(t.events).toEqual(['add a', 'add b', 'update a 5->11', 'delete b 12']);
    // A clean close reconnects as well.
    t.lw.last.cb.onDone();
    await tick();
    t.clock.advance(1000);
    await tick();
    expect(t.lw.watches).toHaveLength(3);
    expect(t.lw.last.opts.resourceVersion).toBe('15');
    t.stop.abort();
    await run;
  });

  it('relists on a 410 ERROR event and synthesises deletes with the last known state', async () => {
    const t = setup();
    t.lw.items = [obj('a', '5'), obj('b', '6')];
    t.lw.rv = '6';
    const run = t.start();
    await tick();
    t.lw.items = [obj('a', '20')];
    t.lw.rv = '21';
    t.lw.send({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', code: 410, reason: 'Expired' } as KObject });
    await tick();
    expect(t.lw.watches[0]?.stopped).toBe(true);
    t.clock.advance(1000);
    await tick();
    expect(t.lw.lists).toHaveLength(2);
    expect(t.events).toEqual(['add a', 'add b', 'update a 5->20', 'delete b unknown 6']);
    expect(t.lw.last.opts.resourceVersion).toBe('21');
    expect(await t.registry.getSingleMetric('kube_identity_informer_relists_total')?.get()).toMatchObject({ values: [{ value: 2 }] });
    t.stop.abort();
    await run;
  });

  it('relists on an HTTP 410 from the watch request', async () => {
    const t = setup();
    const run = t.start();
    await tick();
    t.lw.last.cb.onDone(Object.assign(new Error('Gone'), { statusCode: 410 }));
    await tick();
    t.clock.advance(1000);
    await tick();
    expect(t.lw.lists).toHaveLength(2);
    t.stop.abort();
    await run;
  });

  it('retries a failed list with backoff', async () => {
    const t = setup();
    t.lw.listError = new Error('connection refused');
    const run = t.start();
    await tick();
    expect(t.inf.hasSynced()).toBe(false);
    t.lw.listError = undefined;
    t.clock.advance(100);
    await tick();
    expect(t.inf.hasSynced()).toBe(true);
    t.stop.abort();
    await run;
  });

  it('restarts a watch that stays silent longer than 1.5× the bookmark interval', async () => {
    const t = setup();
    const run = t.start();
    await tick();
    t.clock.advance(60_000);
    t.lw.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '3' } } });
    t.clock.advance(89_999);
    await tick();
    expect(t.lw.watches[0]?.stopped).toBe(false);
    t.clock.advance(1);
    await tick();
    expect(t.lw.watches[0]?.stopped).toBe(true);
    t.clock.advance(1000);
    await tick();
    expect(t.lw.watches).toHaveLength(2);
    expect(t.lw.last.opts.resourceVersion).toBe('3');
    t.stop.abort();
    await run;
  });

  it('resyncs every cached object as an update', async () => {
    const t = setup({ resyncPeriodMs: 30_000 });
    t.lw.items = [obj('a', '5')];
    const run = t.start();
    await tick();
    t.lw.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '6' } } });
    t.clock.advance(30_000);
    expect(t.events).toEqual(['add a', 'update a 5->5']);
    t.stop.abort();
    await run;
  });

  it('keeps going when a handler throws', async () => {
    const t = setup();
    t.inf.addHandlers({
      add: () => {
        throw new Error('boom');
      },
    });
    const run = t.start();
    await tick();
    t.lw.send({ type: 'ADDED', object: obj('x', '2') });
    expect(t.events).toEqual(['add x']);
    t.stop.abort();
    await run;
  });

  it('caches objects without managedFields, from lists and from watch events', async () => {
    const t = setup({ pageSize: 1 });
    const managedFields = [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }];
    t.lw.items = [obj('a', '5', { data: { k: 'v' } }), obj('b', '6')];
    for (const item of t.lw.items) (item.metadata as Record<string, unknown>).managedFields = managedFields;
    const run = t.start();
    await tick();
    expect(t.inf.store.get('ns/a')).toEqual({ kind: 'Thing', apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' }, data: { k: 'v' } });
    t.lw.send({ type: 'MODIFIED', object: { ...obj('b', '7'), metadata: { name: 'b', namespace: 'ns', resourceVersion: '7', managedFields } } as KObject });
    expect(t.inf.store.get('ns/b')?.metadata).toEqual({ name: 'b', namespace: 'ns', resourceVersion: '7' });
    t.stop.abort();
    await run;
  });

  it('applies a relist page by page and deletes what the whole list did not return', async () => {
    const t = setup({ pageSize: 1 });
    t.lw.items = [obj('a', '5'), obj('b', '6'), obj('c', '7')];
    const run = t.start();
    await tick();
    // The second list's first page is cached before the second page is requested.
    t.lw.items = [obj('a', '20'), obj('c', '21')];
    t.lw.rv = '21';
    const seenAtPage: number[] = [];
    const list = t.lw.list.bind(t.lw);
    t.lw.list = async (opts) => {
      seenAtPage.push(Number(t.inf.store.get('ns/a')?.metadata?.resourceVersion));
      return list(opts);
    };
    t.lw.send({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', code: 410, reason: 'Expired' } as KObject });
    await tick();
    t.clock.advance(1000);
    await tick();
    expect(seenAtPage).toEqual([5, 20]);
    expect(t.events.slice(3)).toEqual(['update a 5->20', 'update c 7->21', 'delete b unknown 6']);
    expect(t.inf.store.keys().sort()).toEqual(['ns/a', 'ns/c']);
    t.stop.abort();
    await run;
  });
});
