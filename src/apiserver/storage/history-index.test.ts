import type { KObject } from '../../api/meta.js';
import { prng } from '../../../test/helpers/prng.js';
import { MvccIndex, type WriteOp } from './mvcc-index.js';
import { StoreError, type StoreEvent } from './store.js';

const obj = (name: string, v: number): KObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: String(v) } });

// Keys in several directories, some names prefixes of others, a nested directory and neighbouring resources.
const KEYS = [
  '/registry/core/nodes/a',
  '/registry/core/nodes/ab',
  '/registry/core/nodes/b',
  '/registry/core/nodesx/a',
  '/registry/core/pods/ns1/p',
  '/registry/core/pods/ns1/q',
  '/registry/core/pods/ns2/p',
  '/registry/core/pods/ns10/p',
  '/registry/coordination.k8s.io/leases/kube-node-lease/a',
  '/registry/coordination.k8s.io/leases/kube-node-lease/b',
  'flat',
];
const PREFIXES = ['', '/', '/registry/', '/registry/core/', '/registry/core/nodes', '/registry/core/nodes/', '/registry/core/nodes/a', '/registry/core/pods/', '/registry/core/pods/ns1', '/registry/core/pods/ns1/', '/registry/core/pods/ns1/p', '/registry/coordination.k8s.io/leases/kube-node-lease/', 'fl', '/nothing/'];

/** Applies `count` random writes; returns every event in order, as a full log the index must agree with. */
function write(index: MvccIndex, count: number, random: () => number, log: StoreEvent[]): void {
  for (let i = 0; i < count; i++) {
    const key = KEYS[Math.floor(random() * KEYS.length)]!;
    const exists = index.get(key) !== undefined;
    const op: WriteOp = !exists ? { kind: 'create', key, object: obj(key, i) } : random() < 0.3 ? { kind: 'delete', key } : { kind: 'update', key, object: obj(key, i) };
    const prepared = index.prepare(op);
    index.apply(prepared);
    log.push(prepared.event);
  }
}

/** The resource a prefix lies within (storageKey's `/registry/GROUP/RESOURCE/`), if it is that long. */
const resourceOf = (prefix: string): string | undefined => /^\/registry\/[^/]+\/[^/]+\//.exec(prefix)?.[0];

/**
 * eventsAfter against a scan of the full log, for every prefix and every start revision: served,
 * exactly as the scan, from `compacted` on, and before it within one resource while none of that
 * resource's events after the start is gone (and the start is not before `floor`, where a restored
 * history began); Compacted otherwise.
 */
function expectSameAsScan(index: MvccIndex, log: StoreEvent[], floor = 0): void {
  const compacted = index.compactedRevision();
  for (const prefix of PREFIXES) {
    const resource = resourceOf(prefix);
    for (let from = 0; from <= index.revision() + 1; from++) {
      const lost = from < compacted && (resource === undefined || from < floor || log.some((e) => e.revision > from && e.revision <= compacted && e.key.startsWith(resource)));
      if (lost) {
        expect(() => index.eventsAfter(from, prefix)).toThrow(StoreError);
        continue;
      }
      const expected = log.filter((e) => e.revision > from && e.key.startsWith(prefix)).map((e) => e.revision);
      expect([prefix, from, index.eventsAfter(from, prefix).map((e) => e.revision)]).toEqual([prefix, from, expected]);
    }
  }
}

describe('a watch backlog read through the history index', () => {
  it('returns exactly the events after the start revision under the prefix, in order, as the history is compacted', () => {
    const random = prng(7);
    const index = new MvccIndex(40);
    const log: StoreEvent[] = [];
    // 40 kept events: the index trims itself every 40 writes, so these rounds cross several trims and stop between them.
    for (let round = 0; round < 12; round++) {
      write(index, 1 + Math.floor(random() * 30), random, log);
      expectSameAsScan(index, log);
    }
    expect(index.compactedRevision()).toBeGreaterThan(100);
  });

  it('serves the same backlog from history restored from storage', () => {
    const random = prng(11);
    const written = new MvccIndex(1000);
    const log: StoreEvent[] = [];
    write(written, 150, random, log);
    const restored = new MvccIndex(60);
    const current = KEYS.flatMap((key) => written.get(key) ?? []);
    restored.restore(current, log, written.revision());
    expect(restored.compactedRevision()).toBe(90);
    expectSameAsScan(restored, log, 90);
    write(restored, 70, random, log);
    expectSameAsScan(restored, log, 90);
  });

  it('gives a watch from the current or a future revision no backlog', () => {
    const index = new MvccIndex(10);
    const log: StoreEvent[] = [];
    write(index, 5, prng(3), log);
    expect(index.eventsAfter(index.revision(), '')).toEqual([]);
    expect(index.eventsAfter(index.revision() + 3, '/registry/')).toEqual([]);
  });
});
