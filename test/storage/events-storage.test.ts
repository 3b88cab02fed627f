/**
 * Where Events live: once, as core/v1, at kube-apiserver's `/registry/events/<ns>/<name>` whichever
 * group wrote them, for --event-ttl after their last write (an etcd lease; a sweep on SQLite); and the
 * upgrade of data directories written before, which kept events.k8s.io Events apart
 * (`/registry/events.k8s.io/events/...`): moved on start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { SqliteStore } from '../../src/apiserver/storage/sqlite/sqlite.js';
import { storageKey } from '../../src/apiserver/storage/store.js';
import { silentLogger } from '../../src/log/logger.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { openWatch, raw, type RawTarget } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { describeWithTools } from '../helpers/tools.js';

const CORE = '/api/v1/namespaces/default/events';
const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';

/** An events.k8s.io Event as the previous release stored it (its own group's shape and key). */
const legacyEvent = (name: string): Record<string, unknown> => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: '2026-11-20T10:00:00Z' },
  eventTime: '2026-11-20T10:00:00.000000Z',
  reportingController: 'kube-identity/csrapproving',
  reportingInstance: 'host-1',
  action: 'Approve',
  reason: 'AutoApproved',
  regarding: { kind: 'CertificateSigningRequest', name: 'csr-1', apiVersion: 'certificates.k8s.io/v1' },
  note: 'Auto approving kubelet client certificate',
  type: 'Normal',
});

/** The moved Event reads the same through both groups, uid and creation time kept. */
async function expectMoved(target: RawTarget, name: string): Promise<void> {
  const v1 = await raw(target, 'GET', `${V1}/${name}`);
  expect(v1.status).toBe(200);
  expect(v1.json).toMatchObject({ note: 'Auto approving kubelet client certificate', reportingController: 'kube-identity/csrapproving' });
  expect(v1.json.metadata).toMatchObject({ uid: `uid-${name}`, creationTimestamp: '2026-11-20T10:00:00Z' });
  const core = await raw(target, 'GET', `${CORE}/${name}`);
  expect(core.json).toMatchObject({ message: 'Auto approving kubelet client certificate', reportingComponent: 'kube-identity/csrapproving' });
  expect(core.json.metadata.resourceVersion).toBe(v1.json.metadata.resourceVersion);
}

it('moves the events.k8s.io Events of an older SQLite data directory to the core Events on start', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'events-upgrade-'));
  try {
    const old = await SqliteStore.open(path.join(dataDir, 'store.db'));
    await old.create(storageKey('events.k8s.io', 'events', 'default', 'old-ev'), legacyEvent('old-ev'));
    // An Event of the same name in both places (only old data can hold that): the core one stays.
    await old.create(storageKey('events.k8s.io', 'events', 'default', 'both'), legacyEvent('both'));
    await old.create(storageKey('', 'events', 'default', 'both'), { apiVersion: 'v1', kind: 'Event', metadata: { name: 'both', namespace: 'default' }, message: 'core copy' });
    await old.close();

    const s = await startTestServer({ storage: 'sqlite', dataDir });
    try {
      await expectMoved(s, 'old-ev');
      expect((await raw(s, 'GET', `${V1}/both`)).json.note).toBe('core copy');
      expect((await s.store.range({ prefix: storageKey('events.k8s.io', 'events', undefined) })).items).toEqual([]);
    } finally {
      await s.close();
    }
    // A second start has nothing left to move and changes nothing.
    const again = await startTestServer({ storage: 'sqlite', dataDir });
    try {
      expect((await raw(again, 'GET', `${V1}/old-ev`)).json.metadata.uid).toBe('uid-old-ev');
    } finally {
      await again.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('deletes Events --event-ttl after their last write on SQLite, as their etcd lease would', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'events-ttl-'));
  const server = await startEmbeddedServer({ dataDir, storage: 'sqlite', eventTtlSeconds: 1, logger: silentLogger() });
  try {
    const target = { url: server.url, caPem: server.credentials.caPem, admin: { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem } };
    const created = await raw(target, 'POST', V1, { body: { ...legacyEvent('short-lived'), metadata: { name: 'short-lived' } } });
    expect(created.status).toBe(201);
    await raw(target, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'kept' } } });
    const watch = await openWatch(target, `${CORE}?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`);
    try {
      const [gone] = await watch.waitFor(1, 10_000);
      expect(gone).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'short-lived' } } });
    } finally {
      watch.close();
    }
    expect((await raw(target, 'GET', `${V1}/short-lived`)).status).toBe(404);
    expect((await raw(target, 'GET', '/api/v1/namespaces/default/configmaps/kept')).status).toBe(200);
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

describeWithTools(['etcd'])('Events on etcd', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let dataDir: string;
  let server: EmbeddedServer;
  let target: RawTarget;

  beforeAll(async () => {
    etcd = await startEtcd();
    client = new Etcd3({ hosts: etcd.endpoints });
    // What the previous release left in etcd: an events.k8s.io Event under its group's own path.
    await client.put('/registry/events.k8s.io/events/default/legacy-ev').value(JSON.stringify(legacyEvent('legacy-ev')));
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'events-etcd-'));
    server = await startEmbeddedServer({ dataDir, storage: 'etcd', etcd: { endpoints: etcd.endpoints }, eventTtlSeconds: 600, logger: silentLogger() });
    target = { url: server.url, caPem: server.credentials.caPem, admin: { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem } };
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    client?.close();
    await etcd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const leaseTtl = async (key: string): Promise<number> => {
    const lease = (await client.kv.range({ key: Buffer.from(key) })).kvs[0]?.lease ?? '0';
    if (lease === '0') return 0;
    return Number((await client.leaseClient.leaseTimeToLive({ ID: lease })).grantedTTL);
  };

  it('keeps an Event written through events.k8s.io/v1 at /registry/events/, as core/v1, on the event-TTL lease', async () => {
    const body = { ...legacyEvent('new-ev'), metadata: { name: 'new-ev' } };
    expect((await raw(target, 'POST', V1, { body })).status).toBe(201);
    const keys = await client.getAll().prefix('/registry/events').keys();
    expect(keys).toContain('/registry/events/default/new-ev');
    expect(keys.filter((k) => k.startsWith('/registry/events.k8s.io/'))).toEqual([]);
    const stored = JSON.parse((await client.get('/registry/events/default/new-ev').string()) ?? '{}');
    expect(stored).toMatchObject({ apiVersion: 'v1', kind: 'Event', message: 'Auto approving kubelet client certificate', reportingComponent: 'kube-identity/csrapproving' });
    expect(await leaseTtl('/registry/events/default/new-ev')).toBeGreaterThanOrEqual(600);
  });

  it('moved the Event an older release kept under /registry/events.k8s.io/ to /registry/events/, on a lease', async () => {
    await expectMoved(target, 'legacy-ev');
    expect(await client.get('/registry/events.k8s.io/events/default/legacy-ev').string()).toBeNull();
    expect(await leaseTtl('/registry/events/default/legacy-ev')).toBeGreaterThanOrEqual(600);
  });
});
