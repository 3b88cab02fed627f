/** SqliteStore behaviour across reopen, and its file lock; shared behaviour is in store-conformance.test.ts. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { jest } from '@jest/globals';
import { toApiError } from '../../http/errors.js';
import type { KObject } from '../../../api/meta.js';
import { SqliteStore } from './sqlite.js';
import { StoreError, type StoreEvent } from '../store.js';
import type { KeyTransformer, ValueTransformer } from '../value-transformer.js';
import { sqliteRows } from '../../../../test/helpers/sqlite-rows.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sqlite-store-'));
  file = path.join(dir, 'state.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface WriterInternals {
  worker: Worker;
  onReply(reply: unknown): void;
}
const writerOf = (store: SqliteStore): WriterInternals => (store as unknown as { writer: WriterInternals }).writer;

/**
 * Makes the writer thread die after its next commit, before the store reads the answer: the thread
 * answers once the commit is on disk, and that answer is dropped while the thread is terminated.
 * Resolves to the thread's exit code.
 */
function dieAfterNextCommit(store: SqliteStore): Promise<number> {
  const writer = writerOf(store);
  return new Promise((resolve) => {
    writer.onReply = () => resolve(writer.worker.terminate());
  });
}

const obj = (name: string, v: string): KObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { v } });

describe('SqliteStore', () => {
  it('keeps values, history and the revision counter across reopen', async () => {
    let store = await SqliteStore.open(file);
    await store.create('/r/a', obj('a', '1'));
    await store.create('/r/b', obj('b', '1'));
    await store.update('/r/a', obj('a', '2'));
    await store.create('/r/c', obj('c', '1'));
    await store.delete('/r/c');
    await store.close();

    store = await SqliteStore.open(file);
    expect(store.currentRevision()).toBe(5);
    expect((await store.get('/r/a'))?.object).toEqual({ ...obj('a', '2'), metadata: { name: 'a', resourceVersion: '3' } });
    expect(await store.get('/r/c')).toBeUndefined();
    const atTwo = await store.range({ prefix: '/r/', revision: 2 });
    expect(atTwo.items.map((i) => [i.key, i.object.data, i.revision])).toEqual([
      ['/r/a', { v: '1' }, 1],
      ['/r/b', { v: '1' }, 2],
    ]);

    const events: StoreEvent[] = [];
    store.watch('/r/', { fromRevision: 2, onEvent: (e) => events.push(e) });
    // The deleted key held the newest revision; the next write must still get a new one.
    expect((await store.create('/r/c', obj('c', '2'))).revision).toBe(6);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.map((e) => [e.type, e.key, e.revision])).toEqual([
      ['MODIFIED', '/r/a', 3],
      ['ADDED', '/r/c', 4],
      ['DELETED', '/r/c', 5],
      ['ADDED', '/r/c', 6],
    ]);
    expect(events[1]?.prevObject).toBeUndefined();
    expect(events[2]?.prevObject?.metadata?.resourceVersion).toBe('4');
    await store.close();
  });

  it('drops the key index earlier files have, and reads and writes them as before', async () => {
    let store = await SqliteStore.open(file);
    await store.create('/r/a', obj('a', '1'));
    await store.update('/r/a', obj('a', '2'));
    await store.create('/r/b', obj('b', '1'));
    await store.close();
    // As the previous release left the file (node:sqlite in a child: see test/helpers/sqlite-rows.ts).
    const addIndex = "new (require('node:sqlite').DatabaseSync)(process.argv[1]).exec('CREATE INDEX log_key ON log (key, revision)')";
    execFileSync(process.execPath, ['--no-warnings', '-e', addIndex, file]);
    const indexes = "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'";
    expect(sqliteRows(file, indexes)).toEqual([{ name: 'log_key' }]);

    store = await SqliteStore.open(file);
    expect(store.currentRevision()).toBe(3);
    expect((await store.get('/r/a'))?.object.data).toEqual({ v: '2' });
    expect((await store.update('/r/b', obj('b', '2'))).revision).toBe(4);
    await store.close();
    expect(sqliteRows(file, indexes)).toEqual([]);
    store = await SqliteStore.open(file);
    expect((await store.range({ prefix: '/r/' })).items.map((i) => [i.key, i.object.data, i.revision])).toEqual([
      ['/r/a', { v: '2' }, 2],
      ['/r/b', { v: '2' }, 4],
    ]);
    await store.close();
  });

  it('compacts the file log, records the compacted revision and never reuses revisions', async () => {
    let store = await SqliteStore.open(file, { historyLimit: 10 });
    for (let i = 0; i < 25; i++) await store.create(`/r/k${String(i).padStart(2, '0')}`, obj(`k${i}`, '1'));
    for (let i = 0; i < 25; i++) await store.delete(`/r/k${String(i).padStart(2, '0')}`);
    expect(store.compactedRevision()).toBe(40);
    await store.close();

    const meta = Object.fromEntries(sqliteRows(file, 'SELECT name, value FROM meta').map((r) => [r.name, r.value]));
    // As etcd keeps: each key's newest row at the compacted revision unless deleted, and every later row.
    const kept = sqliteRows(file, 'SELECT revision FROM log ORDER BY revision').map((r) => r.revision);
    expect(meta.revision).toBe(50);
    expect(meta.compacted).toBeGreaterThanOrEqual(39);
    expect(meta.compacted).toBe(40);
    expect(kept).toEqual([...Array.from({ length: 10 }, (_, i) => 16 + i), ...Array.from({ length: 10 }, (_, i) => 41 + i)]);

    store = await SqliteStore.open(file, { historyLimit: 10 });
    expect(store.currentRevision()).toBe(50);
    expect(store.compactedRevision()).toBe(40);
    expect((await store.range({ prefix: '/r/', revision: 40 })).items.map((i) => i.key)).toEqual(
      Array.from({ length: 10 }, (_, i) => `/r/k${String(15 + i).padStart(2, '0')}`),
    );
    await expect(store.range({ prefix: '/r/', revision: 39 })).rejects.toMatchObject({ code: 'Compacted', revision: 40 });
    expect((await store.create('/r/k00', obj('k0', '2'))).revision).toBe(51);
    await store.close();
  });

  it('reopens with a different history limit', async () => {
    let store = await SqliteStore.open(file, { historyLimit: 10 });
    for (let i = 0; i < 30; i++) await store.create(`/r/k${i}`, obj(`k${i}`, '1'));
    await store.close();
    store = await SqliteStore.open(file, { historyLimit: 100 });
    const widened = store.compactedRevision();
    expect(widened).toBeGreaterThanOrEqual(19);
    expect(widened).toBeLessThanOrEqual(20);
    expect((await store.range({ prefix: '/r/', revision: widened })).items).toHaveLength(widened);
    await store.close();
    store = await SqliteStore.open(file, { historyLimit: 3 });
    expect(store.compactedRevision()).toBe(27);
    expect((await store.create('/r/last', obj('last', '1'))).revision).toBe(31);
    await store.close();
  });

  it('refuses a second store on a file that is open', async () => {
    await (await SqliteStore.open(file)).close();
    const store = await SqliteStore.open(file, { busyTimeoutMs: 50 });
    // The lock is held from open on, not only from the first write.
    await expect(SqliteStore.open(file, { busyTimeoutMs: 50 })).rejects.toThrow(/locked/);
    await store.create('/r/a', obj('a', '1'));
    await store.close();
    const again = await SqliteStore.open(file);
    expect((await again.get('/r/a'))?.revision).toBe(1);
    await again.close();
  });

  it('rejects operations after close', async () => {
    const store = await SqliteStore.open(file);
    await store.close();
    await expect(store.get('/r/a')).rejects.toThrow(/closed/);
    await expect(store.create('/r/a', obj('a', '1'))).rejects.toThrow(/closed/);
  });

  describe('group commit', () => {
    it('commits concurrent writes in one transaction, in call order, with CAS against the group', async () => {
      const store = await SqliteStore.open(file);
      await store.create('/r/base', obj('base', '0'));
      const events: StoreEvent[] = [];
      store.watch('/r/', { fromRevision: 1, onEvent: (e) => events.push(e) });
      const persist = jest.spyOn(store as unknown as { persist(writes: unknown[]): void }, 'persist');
      // All issued in one turn: one group. The update sees the create queued before it.
      const create = store.create('/r/x', obj('x', '1'));
      const update = store.update('/r/x', obj('x', '2'), 2);
      const stale = store.update('/r/base', obj('base', '1'), 99);
      const dup = store.create('/r/x', obj('x', 'again'));
      const del = store.delete('/r/base', 1);
      // Not visible before the group committed.
      expect(await store.get('/r/x')).toBeUndefined();
      expect(store.currentRevision()).toBe(1);
      await expect(stale).rejects.toMatchObject({ code: 'Conflict', revision: 1 });
      await expect(dup).rejects.toMatchObject({ code: 'KeyExists', revision: 3 });
      expect([(await create).revision, (await update).revision, (await del).revision]).toEqual([2, 3, 4]);
      expect(persist.mock.calls.map(([writes]) => writes.length)).toEqual([3]);
      expect((await store.get('/r/x'))?.object.data).toEqual({ v: '2' });
      await new Promise((resolve) => setImmediate(resolve));
      expect(events.map((e) => [e.type, e.key, e.revision])).toEqual([
        ['ADDED', '/r/x', 2],
        ['MODIFIED', '/r/x', 3],
        ['DELETED', '/r/base', 4],
      ]);
      await store.close();
      const reopened = await SqliteStore.open(file);
      expect(reopened.currentRevision()).toBe(4);
      expect((await reopened.get('/r/x'))?.object.data).toEqual({ v: '2' });
      await reopened.close();
    });

    it('hands the group of each turn over without waiting for the commits before it, and settles them in order', async () => {
      const store = await SqliteStore.open(file);
      await store.create('/r/base', obj('base', '0'));
      const events: StoreEvent[] = [];
      store.watch('/r/', { fromRevision: 1, onEvent: (e) => events.push(e) });
      const persist = jest.spyOn(store as unknown as { persist(writes: unknown[]): Promise<void> }, 'persist');
      const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
      const create = store.create('/r/a', obj('a', '1'));
      await turn();
      // Checked against the create in the group before, committed or not; the stale one fails alone.
      const update = store.update('/r/a', obj('a', '2'), 2);
      const stale = expect(store.update('/r/base', obj('base', '1'), 5)).rejects.toMatchObject({ code: 'Conflict', revision: 1 });
      await turn();
      const other = store.create('/r/b', obj('b', '1'));
      await turn();
      expect(persist.mock.calls.map(([writes]) => writes.length)).toEqual([1, 1, 1]);
      await stale;
      expect([(await create).revision, (await update).revision, (await other).revision]).toEqual([2, 3, 4]);
      await turn();
      expect(events.map((e) => [e.type, e.key, e.revision])).toEqual([
        ['ADDED', '/r/a', 2],
        ['MODIFIED', '/r/a', 3],
        ['ADDED', '/r/b', 4],
      ]);
      await store.close();
      const reopened = await SqliteStore.open(file);
      expect(reopened.currentRevision()).toBe(4);
      expect((await reopened.get('/r/a'))?.object.data).toEqual({ v: '2' });
      await reopened.close();
    });

    it('fails a group whose commit fails, and every write queued behind it; none becomes visible', async () => {
      // A real commit failure: the file reaches its quota (SQLITE_FULL), as etcd refuses writes past its quota.
      const store = await SqliteStore.open(file, { quotaBytes: 96 * 1024 });
      const big = (name: string): KObject => obj(name, 'x'.repeat(8000));
      let acked = 0;
      for (;;) {
        const err = await store.create(`/r/k${acked}`, big(`k${acked}`)).then(() => undefined, (e: unknown) => e);
        if (err) {
          expect(err).toMatchObject({ code: 'SQLITE_FULL' });
          break;
        }
        acked++;
      }
      expect(acked).toBeGreaterThan(0);
      const revision = store.currentRevision();
      expect(revision).toBe(acked);
      const events: StoreEvent[] = [];
      store.watch('/r/', { fromRevision: revision, onEvent: (e) => events.push(e) });

      const inFlight = store.create('/r/over', big('over'));
      await new Promise((resolve) => setImmediate(resolve));
      // Sent while the first group commits; its CAS was checked against that group's create.
      const queued = store.update('/r/over', obj('over', 'small'), revision + 1);
      await expect(inFlight).rejects.toMatchObject({ code: 'SQLITE_FULL' });
      await expect(queued).rejects.toMatchObject({ code: 'SQLITE_FULL' });
      expect(store.currentRevision()).toBe(revision);
      expect(await store.get('/r/over')).toBeUndefined();
      expect((await store.get('/r/k0'))?.revision).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(events).toEqual([]);
      await store.close();

      // The file holds exactly the acknowledged writes, and the failed writes' revisions are free.
      const reopened = await SqliteStore.open(file);
      expect(reopened.currentRevision()).toBe(revision);
      expect((await reopened.range({ prefix: '/r/' })).items).toHaveLength(acked);
      expect((await reopened.create('/r/over', obj('over', 'fits'))).revision).toBe(revision + 1);
      await reopened.close();
    });

    it('answers writes in flight as of unknown outcome and fails later ones, instead of hanging, when the writer thread is gone', async () => {
      const store = await SqliteStore.open(file);
      await store.create('/r/a', obj('a', '1'));
      // The thread is stopped before it can take the next write, which is then in flight and never
      // answered (stopped after a setImmediate, it sometimes committed and answered that write first).
      const stopped = writerOf(store).worker.terminate();
      const pending = store.create('/r/b', obj('b', '1'));
      await stopped;
      await expect(pending).rejects.toMatchObject({ code: 'Timeout', message: expect.stringMatching(/writer thread exited .*may or may not have been committed/) });
      // Never sent: a failure, not an unknown outcome.
      const later = await store.create('/r/c', obj('c', '1')).catch((e: unknown) => e);
      expect([later instanceof StoreError, (later as Error).message]).toEqual([false, expect.stringMatching(/writer thread exited/)]);
      expect(store.currentRevision()).toBe(1);
      await store.close();
    });

    it('answers a write the thread committed but died before confirming with a Timeout, and the reopened file holds it', async () => {
      const store = await SqliteStore.open(file);
      await store.create('/r/a', obj('a', '1'));
      await store.checkHealth();
      const died = dieAfterNextCommit(store);
      const err = await store.create('/r/b', obj('b', '1')).catch((e: unknown) => e);
      expect(await died).toBe(1);
      expect(err).toMatchObject({ code: 'Timeout', message: expect.stringMatching(/may or may not have been committed/) });
      expect(toApiError(err).toStatus()).toMatchObject({ code: 504, reason: 'Timeout', message: expect.stringMatching(/^Timeout: .*may or may not have been committed/) });
      // Unknown here: neither visible nor its revision reused, and nothing more is written.
      expect(store.currentRevision()).toBe(1);
      expect(await store.get('/r/b')).toBeUndefined();
      await expect(store.create('/r/c', obj('c', '1'))).rejects.toThrow(/writer thread exited/);
      // Out of /readyz: it can serve reads but never write again.
      await expect(store.checkHealth()).rejects.toThrow(/writer thread exited/);
      await store.close();

      const reopened = await SqliteStore.open(file);
      expect(reopened.currentRevision()).toBe(2);
      expect((await reopened.range({ prefix: '/r/' })).items.map((i) => [i.key, i.revision])).toEqual([
        ['/r/a', 1],
        ['/r/b', 2],
      ]);
      expect((await reopened.create('/r/c', obj('c', '1'))).revision).toBe(3);
      await reopened.close();
    });

    it('commits a queued group on close', async () => {
      const store = await SqliteStore.open(file);
      const pending = store.create('/r/a', obj('a', '1'));
      await store.close();
      expect((await pending).revision).toBe(1);
      const reopened = await SqliteStore.open(file);
      expect((await reopened.get('/r/a'))?.revision).toBe(1);
      await reopened.close();
    });
  });
});

describe('SqliteStore opened while the KMS plugin of its encrypted values is down', () => {
  const SECRETS = '/registry/core/secrets/';
  const [s1, s2, cm] = [`${SECRETS}ns/s1`, `${SECRETS}ns/s2`, '/registry/core/configmaps/ns/cm'];
  const MARK = Buffer.from('k8s:enc:test:');
  let down = false;
  // Decrypts asynchronously, as a KMS provider does for a seed it has not seen yet.
  const transform: KeyTransformer = {
    toStorage: (data) => Buffer.concat([MARK, data]),
    fromStorage: (data) => (down ? Promise.reject(new StoreError('Unavailable', '', 'KMS provider test Decrypt failed: down')) : Promise.resolve(data.subarray(MARK.length))),
    isStale: () => false,
  };
  const transformer: ValueTransformer = { forKey: (key) => (key.startsWith(SECRETS) ? transform : undefined) };
  const rows = (): unknown[] => sqliteRows(file, 'SELECT * FROM log ORDER BY revision');

  it('opens, refuses with Unavailable what needs those values (never writing over them), and serves them once they read', async () => {
    down = false;
    let store = await SqliteStore.open(file, { transformer });
    await store.create(s1, obj('s1', '1'));
    await store.update(s1, obj('s1', '2'));
    await store.create(s2, obj('s2', '1'));
    await store.create(cm, obj('cm', '1'));
    await store.close();
    const stored = rows();

    down = true;
    store = await SqliteStore.open(file, { transformer });
    const unavailable = { code: 'Unavailable', message: expect.stringContaining('Decrypt failed: down') };
    await expect(store.get(s1)).rejects.toMatchObject(unavailable);
    await expect(store.range({ prefix: SECRETS })).rejects.toMatchObject(unavailable);
    await expect(store.range({ prefix: SECRETS, revision: 2 })).rejects.toMatchObject(unavailable);
    await expect(store.update(s1, obj('s1', 'lost'))).rejects.toMatchObject(unavailable);
    await expect(store.delete(s2)).rejects.toMatchObject(unavailable);
    await expect(store.create(s2, obj('s2', 'lost'))).rejects.toMatchObject({ code: 'KeyExists' });
    expect(await store.count(SECRETS)).toBe(2);
    const failed = await new Promise((resolve) => store.watch(SECRETS, { fromRevision: 1, onEvent: () => undefined, onError: resolve }));
    expect(failed).toMatchObject(unavailable);
    // Keys the transformer does not claim are served as usual, writes included.
    expect((await store.get(cm))?.object.data).toEqual({ v: '1' });
    expect((await store.update(cm, obj('cm', '2'))).revision).toBe(5);
    expect(store.currentRevision()).toBe(5);

    down = false;
    expect((await store.get(s1))?.object).toEqual({ ...obj('s1', '2'), metadata: { name: 's1', resourceVersion: '2' } });
    expect((await store.range({ prefix: SECRETS })).items.map((i) => i.object.data)).toEqual([{ v: '2' }, { v: '1' }]);
    expect((await store.range({ prefix: SECRETS, revision: 1 })).items.map((i) => i.object.data)).toEqual([{ v: '1' }]);
    const events: StoreEvent[] = [];
    store.watch(SECRETS, { fromRevision: 1, onEvent: (e) => events.push(e) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.map((e) => [e.type, e.key, e.object.data, e.prevObject?.data])).toEqual([
      ['MODIFIED', s1, { v: '2' }, { v: '1' }],
      ['ADDED', s2, { v: '1' }, undefined],
    ]);
    expect((await store.delete(s2)).revision).toBe(6);
    await store.close();
    // The outage rewrote nothing: the rows before it are as they were.
    expect(rows().slice(0, stored.length)).toEqual(stored);
  });
});
