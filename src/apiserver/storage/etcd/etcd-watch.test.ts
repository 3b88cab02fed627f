import type { KObject } from '../../../api/meta.js';
import { EtcdWatch, type EtcdWatchContext } from './etcd-watch.js';
import { EtcdValues, RelayedValue } from './etcd-value.js';

const etcdValues = new EtcdValues(undefined);
import type { Revisioned } from './recent-objects.js';
import type { SharedEvent, SharedSink } from './shared-watches.js';
import type { StoreEvent } from '../store.js';

const update = (revision: number): SharedEvent => ({
  type: 'Put',
  kv: { key: Buffer.from('/p/a'), value: Buffer.from(`{"v":${revision}}`), create_revision: 1, mod_revision: revision, version: 2 },
});

describe('EtcdWatch', () => {
  it('tells progress only after the events before it, while one of them waits for its previous state', async () => {
    let sink: SharedSink | undefined;
    const stream = {
      watch: (_key: Buffer, _end: Buffer, _from: number, s: SharedSink) => {
        sink = s;
        return { stop: () => undefined };
      },
    };
    let settle: (prev: Revisioned) => void = () => undefined;
    const read = new Promise<Revisioned>((resolve) => (settle = resolve));
    const got: string[] = [];
    const watch = new EtcdWatch(stream, {
      etcdPrefix: '/p/',
      toKey: (etcdKey) => etcdKey,
      relay: (_key, _etcdKey, value, revision) => ({ object: JSON.parse(Buffer.from(value).toString()) as KObject, revision }),
      previous: () => read,
      deleted: () => undefined,
      options: {
        fromRevision: 10,
        onEvent: (e) => got.push(`${e.type} ${e.revision} after ${JSON.stringify(e.prevObject)}`),
        onProgress: (revision) => got.push(`progress ${revision}`),
      },
      compacted: () => 0,
      observeCompacted: () => undefined,
      onStop: () => undefined,
    });
    watch.start();

    // A key the watch had not seen: its previous state is being read when etcd reports progress past it.
    sink!.events([update(11)]);
    sink!.progress(12);
    expect(got).toEqual([]);
    settle({ object: { v: 9 } as KObject, revision: 9 });
    await read;
    await new Promise((resolve) => setImmediate(resolve));
    expect(got).toEqual(['MODIFIED 11 after {"v":9}', 'progress 12']);

    // With nothing waiting, progress is told at once.
    sink!.progress(13);
    expect(got).toEqual(['MODIFIED 11 after {"v":9}', 'progress 12', 'progress 13']);
    watch.stop();
  });

  it('hands a relaying watcher the text of each value and parses it only when read; any other watcher gets objects', () => {
    const value = (revision: number): Buffer => Buffer.from(`{"kind":"ConfigMap","metadata":{"name":"a"},"data":{"v":"${revision}"}}`);
    const put = (revision: number, created = 1): SharedEvent => ({ type: 'Put', kv: { key: Buffer.from('/p/a'), value: value(revision), create_revision: created, mod_revision: revision, version: 1 } });
    const values = new Map<number, RelayedValue>();
    const start = (relays: boolean, got: StoreEvent[]): SharedSink => {
      let sink: SharedSink | undefined;
      const ctx: EtcdWatchContext = {
        etcdPrefix: '/p/',
        toKey: (etcdKey) => etcdKey,
        relay: (_key, _etcdKey, v, revision) => {
          let known = values.get(revision);
          if (!known) values.set(revision, (known = etcdValues.relay('/p/a', v, revision) as RelayedValue));
          return known;
        },
        previous: (_key, _etcdKey, _revision, ev) => values.get(ev.prevRevision ?? -1),
        deleted: () => undefined,
        options: { fromRevision: 10, onEvent: (e) => got.push(e), relay: relays },
        compacted: () => 0,
        observeCompacted: () => undefined,
        onStop: () => undefined,
      };
      new EtcdWatch({ watch: (_key, _end, _from, s) => ((sink = s), { stop: () => undefined }) }, ctx).start();
      return sink!;
    };
    const relayed: StoreEvent[] = [];
    const sink = start(true, relayed);
    sink.events([put(11, 11), { ...put(12, 11), prevRevision: 11 }]);
    expect(relayed.map((e) => [e.type, e.revision, e.text])).toEqual([
      ['ADDED', 11, '{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"11"},"data":{"v":"11"}}'],
      ['MODIFIED', 12, '{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"12"},"data":{"v":"12"}}'],
    ]);
    expect([values.get(11)?.built, values.get(12)?.built]).toEqual([undefined, undefined]);
    // Read, each is parsed once and shared.
    const modified = relayed[1]!;
    expect(modified.prevObject).toEqual({ kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '11' }, data: { v: '11' } });
    expect(modified.prevObject).toBe(relayed[0]!.object);
    expect(modified.object.data).toEqual({ v: '12' });
    expect(values.get(12)?.built).toBe(modified.object);

    const parsed: StoreEvent[] = [];
    start(false, parsed).events([{ ...put(13, 11), prevRevision: 12 }]);
    expect(values.get(13)?.built).toBeDefined();
    expect(parsed[0]).toStrictEqual({ type: 'MODIFIED', key: '/p/a', object: values.get(13)!.object, prevObject: modified.object, revision: 13 });
  });
});
