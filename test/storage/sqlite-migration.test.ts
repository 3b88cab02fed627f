/**
 * A data directory written by the first SQLite format (tables kv + events; made by the code before
 * the single-table log with `kube-identity apiserver` and kubectl: a namespace, three ConfigMaps,
 * one labelled, one deleted, a ServiceAccount, a ClusterRoleBinding — test/storage/fixtures/
 * sqlite-v1-datadir, its kubeconfig left out) is migrated on open, in one transaction, and serves
 * the same objects and history.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { startEmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { SqliteStore } from '../../src/apiserver/storage/sqlite/sqlite.js';
import type { StoreEvent } from '../../src/apiserver/storage/store.js';
import { silentLogger } from '../../src/log/logger.js';

const run = promisify(execFile);
const FIXTURE = path.join(process.cwd(), 'test/storage/fixtures/sqlite-v1-datadir');
const CM = (name: string): string => `/registry/core/configmaps/migr/${name}`;

describe('SQLite first-format migration', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-migrate-'));
    cpSync(FIXTURE, path.join(dir, 'data'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every object, the revision and the history with previous values, and leaves one table', async () => {
    const file = path.join(dir, 'data', 'store.db');
    const before = new Database(file, { readonly: true });
    const kvBefore = before.prepare('SELECT key, value, revision FROM kv ORDER BY key').all();
    before.close();

    const store = await SqliteStore.open(file);
    expect(store.currentRevision()).toBe(55);
    const all = await store.range({ prefix: '/registry/' });
    expect(all.items.map((i) => [i.key, i.revision])).toEqual(kvBefore.map((r) => [(r as { key: string }).key, (r as { revision: number }).revision]));
    expect((await store.get(CM('cm1')))?.object.metadata?.labels).toEqual({ changed: 'yes' });
    expect(await store.get(CM('cm2'))).toBeUndefined();
    const events: StoreEvent[] = [];
    store.watch(CM(''), { fromRevision: 0, onEvent: (e) => events.push(e) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.map((e) => [e.type, e.key])).toEqual([
      ['ADDED', CM('cm1')],
      ['ADDED', CM('cm2')],
      ['ADDED', CM('cm3')],
      ['MODIFIED', CM('cm1')],
      ['DELETED', CM('cm2')],
    ]);
    expect(events[3]?.prevObject?.metadata?.labels).toBeUndefined();
    expect(events[4]?.prevObject?.metadata?.name).toBe('cm2');
    // A range in the past reads the migrated history.
    const past = await store.range({ prefix: CM(''), revision: events[2]!.revision });
    expect(past.items.map((i) => i.key)).toEqual([CM('cm1'), CM('cm2'), CM('cm3')]);
    await store.close();

    const after = new Database(file, { readonly: true });
    const tables = after.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    const indexes = after.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'").pluck().all();
    after.close();
    expect(tables).toEqual(['log', 'meta']);
    expect(indexes).toEqual([]);
    const again = await SqliteStore.open(file);
    expect(again.currentRevision()).toBe(55);
    expect((await again.range({ prefix: '/registry/' })).items).toHaveLength(kvBefore.length);
    await again.close();
  });

  it('serves the migrated directory to kubectl, and takes writes after it', async () => {
    const server = await startEmbeddedServer({ dataDir: path.join(dir, 'data'), logger: silentLogger(), port: 0 });
    const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', ['--kubeconfig', server.kubeconfigPath, ...args])).stdout;
    try {
      expect((await kubectl('-n', 'migr', 'get', 'configmaps,serviceaccounts', '-o', 'name')).split('\n').filter(Boolean).sort()).toEqual(
        expect.arrayContaining(['configmap/cm1', 'configmap/cm3', 'serviceaccount/app']),
      );
      expect(await kubectl('-n', 'migr', 'get', 'configmap', 'cm1', '-o', 'jsonpath={.metadata.labels.changed}')).toBe('yes');
      expect(await kubectl('auth', 'can-i', 'list', 'configmaps', '--as', 'alice', '-n', 'migr')).toBe('yes\n');
      await kubectl('-n', 'migr', 'create', 'configmap', 'cm4');
      expect(Number(await kubectl('-n', 'migr', 'get', 'configmap', 'cm4', '-o', 'jsonpath={.metadata.resourceVersion}'))).toBeGreaterThan(55);
    } finally {
      await server.close();
    }
  });
});
