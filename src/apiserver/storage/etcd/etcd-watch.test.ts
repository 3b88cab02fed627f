import type { KObject } from '../../../api/meta.js';
import { EtcdWatch } from './etcd-watch.js';
import type { SharedEvent, SharedSink } from './shared-watches.js';

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
    let settle: (prev: KObject) => void = () => undefined;
    const read = new Promise<KObject>((resolve) => (settle = resolve));
    const got: string[] = [];
    const watch = new EtcdWatch(stream, {
      etcdPrefix: '/p/',
      toKey: (etcdKey) => etcdKey,
      open: (_key, _etcdKey, value) => JSON.parse(Buffer.from(value).toString()) as KObject,
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
    settle({ v: 9 } as KObject);
    await read;
    await new Promise((resolve) => setImmediate(resolve));
    expect(got).toEqual(['MODIFIED 11 after {"v":9}', 'progress 12']);

    // With nothing waiting, progress is told at once.
    sink!.progress(13);
    expect(got).toEqual(['MODIFIED 11 after {"v":9}', 'progress 12', 'progress 13']);
    watch.stop();
  });
});
