/** --event-ttl on a store without leases: an Event goes that long after its last write, not before. */
import type { KObject } from '../../api/meta.js';
import { FakeClock } from '../../lib/clock.js';
import { silentLogger } from '../../log/logger.js';
import { MemoryStore } from '../storage/memory/memory.js';
import { storageKey } from '../storage/store.js';
import { EventExpiry, lastWrite } from './event-expiry.js';

const T0 = Date.parse('2026-11-25T06:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const event = (name: string, created: number, written?: number): KObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: {
    name,
    namespace: 'default',
    creationTimestamp: iso(created),
    managedFields: written === undefined ? [] : [{ manager: 'm', operation: 'Update', apiVersion: 'v1', time: iso(written) }],
  },
});
const key = (name: string): string => storageKey('', 'events', 'default', name);

it('takes the last write from the creation and managedFields times', () => {
  expect(lastWrite(event('a', T0))).toBe(T0);
  expect(lastWrite(event('a', T0, T0 + 5000))).toBe(T0 + 5000);
  expect(lastWrite({ metadata: {} })).toBe(0);
});

it('deletes the Events written longer than the TTL ago, on its schedule, and nothing else', async () => {
  const store = new MemoryStore();
  const clock = new FakeClock(T0 + 3_600_000);
  await store.create(key('old'), event('old', T0));
  await store.create(key('rewritten'), event('rewritten', T0, T0 + 1_800_000));
  await store.create(key('fresh'), event('fresh', T0 + 3_000_000));
  await store.create(storageKey('', 'configmaps', 'default', 'old'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old', creationTimestamp: iso(T0) } });
  const expiry = new EventExpiry({ store, ttlMs: 3_600_000, clock, logger: silentLogger() });
  const names = async (prefix: string) => (await store.range({ prefix })).items.map((i) => i.object.metadata?.name);

  expect(await expiry.sweep()).toBe(1);
  expect(await names(storageKey('', 'events', undefined))).toEqual(['fresh', 'rewritten']);
  expect(await names(storageKey('', 'configmaps', undefined))).toEqual(['old']);

  // Swept every tenth of the TTL (at most a minute): 'rewritten' goes once an hour has passed since its write.
  expiry.start();
  const minute = async (): Promise<void> => {
    clock.advance(60_000);
    await new Promise((r) => setImmediate(r));
  };
  for (let i = 0; i < 29; i++) await minute();
  expect(await names(storageKey('', 'events', undefined))).toEqual(['fresh', 'rewritten']);
  await minute();
  expect(await names(storageKey('', 'events', undefined))).toEqual(['fresh']);
  await expiry.stop();
  expect(clock.pendingTimers()).toBe(0);
  await store.close();
});

it('stops part-way through a sweep, and stop resolves once it has', async () => {
  const store = new MemoryStore();
  const clock = new FakeClock(T0 + 7_200_000);
  for (let i = 0; i < 50; i++) await store.create(key(`e${i}`), event(`e${i}`, T0));
  let inFlight = 0;
  let deletes = 0;
  const del = store.delete.bind(store);
  // Each delete takes a turn of the event loop, as a real store's would, so stop() lands mid-sweep.
  store.delete = async (k, revision) => {
    inFlight++;
    deletes++;
    try {
      await new Promise((r) => setImmediate(r));
      return await del(k, revision);
    } finally {
      inFlight--;
    }
  };
  const expiry = new EventExpiry({ store, ttlMs: 3_600_000, clock, logger: silentLogger() });
  expiry.start();
  clock.advance(60_000);
  while (deletes === 0) await new Promise((r) => setImmediate(r));
  await expiry.stop();
  expect(inFlight).toBe(0);
  const done = deletes;
  expect(done).toBeLessThan(50);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  expect(deletes).toBe(done);
  expect(clock.pendingTimers()).toBe(0);
  await store.close();
});
