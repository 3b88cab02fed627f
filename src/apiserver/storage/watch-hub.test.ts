import type { KObject } from '../../api/meta.js';
import type { StoreEvent, WatchTrigger } from './store.js';
import { WatchHub } from './watch-hub.js';

const pod = (name: string, nodeName?: string): KObject => ({ metadata: { name, namespace: 'ns' }, spec: nodeName === undefined ? {} : { nodeName } }) as KObject;
let revision = 0;
const event = (type: StoreEvent['type'], object: KObject, prevObject?: KObject): StoreEvent => ({ type, key: `/registry/pods/ns/${object.metadata?.name ?? ''}`, object, prevObject, revision: ++revision });

describe('the watch hub with triggers', () => {
  it("reaches a trigger's watchers only with events of their name or node, a pod leaving the node included", async () => {
    const hub = new WatchHub();
    const seen = new Map<string, string[]>();
    const watch = (label: string, prefix: string, trigger?: WatchTrigger): void => {
      seen.set(label, []);
      hub.add(prefix, { fromRevision: 0, trigger, onEvent: (e) => seen.get(label)?.push(`${e.type} ${e.object.metadata?.name ?? ''}`) }, []);
    };
    watch('all pods', '/registry/pods/');
    watch('node a', '/registry/pods/', { field: 'spec.nodeName', value: 'a' });
    watch('unscheduled', '/registry/pods/', { field: 'spec.nodeName', value: '' });
    watch('p1', '/registry/pods/ns/', { field: 'metadata.name', value: 'p1' });
    watch('other prefix', '/registry/leases/');
    hub.publish(event('ADDED', pod('p1')));
    hub.publish(event('MODIFIED', pod('p1', 'a'), pod('p1')));
    hub.publish(event('ADDED', pod('p2', 'b')));
    hub.publish(event('MODIFIED', pod('p1', 'b'), pod('p1', 'a')));
    hub.publish(event('DELETED', pod('p1', 'b'), pod('p1', 'b')));
    await Promise.resolve();
    expect(Object.fromEntries(seen)).toEqual({
      'all pods': ['ADDED p1', 'MODIFIED p1', 'ADDED p2', 'MODIFIED p1', 'DELETED p1'],
      'node a': ['MODIFIED p1', 'MODIFIED p1'],
      unscheduled: ['ADDED p1', 'MODIFIED p1'],
      p1: ['ADDED p1', 'MODIFIED p1', 'MODIFIED p1', 'DELETED p1'],
      'other prefix': [],
    });
  });

  it('forgets a stopped watcher and its empty groups, and stops them all on close', async () => {
    const hub = new WatchHub();
    const got: string[] = [];
    const a = hub.add('/registry/pods/', { fromRevision: 0, trigger: { field: 'spec.nodeName', value: 'a' }, onEvent: (e) => got.push(`a ${e.type}`) }, []);
    hub.add('/registry/pods/', { fromRevision: 0, trigger: { field: 'spec.nodeName', value: 'a' }, onEvent: (e) => got.push(`b ${e.type}`) }, []);
    a.stop();
    hub.publish(event('ADDED', pod('p', 'a')));
    await Promise.resolve();
    hub.stopAll();
    hub.publish(event('MODIFIED', pod('p', 'a'), pod('p', 'a')));
    await Promise.resolve();
    expect(got).toEqual(['b ADDED']);
  });
});
