/**
 * Two API server replicas on one etcd and one data directory serve one API: a write through
 * either is read, listed and watched through the other at once, and what access control reads
 * (RBAC bindings, bootstrap-token Secrets, ServiceAccounts behind tokens) follows the store: at once,
 * or, where a replica keeps it in a watch-fed cache as kube-apiserver's informers do (RBAC, bootstrap
 * tokens), within a watch round trip. Objects sit in etcd where kube-apiserver puts them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { Registry } from 'prom-client';
import { createBootstrapTokenAuthenticator } from '../../src/apiserver/authentication/bootstrap-token.js';
import { BootstrapTokenSecrets } from '../../src/apiserver/authentication/bootstrap-token-secrets.js';
import { objectReader } from '../../src/apiserver/registry/registries.js';
import { ensureCredentials } from '../../src/apiserver/server/credentials.js';
import { EtcdStore } from '../../src/apiserver/storage/etcd/etcd.js';
import { EtcdMetrics } from '../../src/apiserver/storage/etcd/etcd-metrics.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { describeWithTools } from '../helpers/tools.js';

const CM = '/api/v1/namespaces/default/configmaps';

async function until(done: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeWithTools(['etcd'])('two API server replicas on one etcd', () => {
  let etcd: EtcdCluster;
  let dataDir: string;
  let a: TestServer;
  let b: TestServer;
  let client: Etcd3;

  const started: TestServer[] = [];
  /** Each replica's etcd request metrics, in the order the replicas started. */
  const metrics = new Map<TestServer, Registry>();
  const replica = async (): Promise<TestServer> => {
    const registry = new Registry();
    const server = await startTestServer({
      dataDir,
      store: await EtcdStore.open({ endpoints: etcd.endpoints, ttlSeconds: (key) => (key.includes('/events/') ? 600 : undefined), metrics: new EtcdMetrics(registry) }),
      tokenFile: 'alice-token,alice,alice-uid,\n',
    });
    started.push(server);
    metrics.set(server, registry);
    return server;
  };
  /** How many reads of Secrets a replica has sent etcd (gets, and ranges such as a bootstrap-token cache miss's). */
  const secretReads = async (s: TestServer | Registry): Promise<number> => {
    const text = await (s instanceof Registry ? s : metrics.get(s)!).getSingleMetricAsString('etcd_requests_total');
    const count = (operation: string): number =>
      Number(new RegExp(`^etcd_requests_total\\{operation="${operation}",type="secrets"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return count('get') + count('list');
  };

  beforeAll(async () => {
    etcd = await startEtcd();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'replicas-'));
    // Started together on an empty directory: they must still end up with one CA.
    [a, b] = await Promise.all([replica(), replica()]);
    client = new Etcd3({ hosts: etcd.endpoints });
  }, 30_000);
  afterAll(async () => {
    client?.close();
    for (const server of started) await server.close();
    await etcd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('share the CA and keys of the data directory, and both are ready', async () => {
    expect(a.caPem).toBe(b.caPem);
    expect(readFileSync(path.join(dataDir, 'ca.crt'), 'utf8')).toBe(a.caPem);
    expect(a.admin).toEqual(b.admin);
    for (const s of [a, b]) {
      const ready = await raw(s, 'GET', '/readyz', { anonymous: true });
      expect([ready.status, ready.text]).toEqual([200, 'ok']);
      // A named check needs credentials (system:monitoring), as upstream.
      expect((await raw(s, 'GET', '/readyz/etcd')).status).toBe(200);
    }
  });

  it('read, list and watch through one replica what the other wrote, at once', async () => {
    const start = await raw(b, 'GET', CM);
    const watch = await openWatch(b, `${CM}?watch=1&resourceVersion=${start.json.metadata.resourceVersion}`);
    const created = await raw(a, 'POST', CM, { body: { metadata: { name: 'one' }, data: { v: '1' } } });
    expect(created.status).toBe(201);
    const rv = created.json.metadata.resourceVersion as string;

    const got = await raw(b, 'GET', `${CM}/one`);
    expect([got.status, got.json.metadata.resourceVersion, got.json.data]).toEqual([200, rv, { v: '1' }]);
    const listed = await raw(b, 'GET', `${CM}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
    expect(listed.status).toBe(200);
    expect(listed.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['kube-root-ca.crt', 'one']);
    const [event] = await watch.waitFor(1);
    expect([event.type, event.object.metadata.name, event.object.metadata.resourceVersion]).toEqual(['ADDED', 'one', rv]);

    // Optimistic concurrency across replicas: B updates with A's resourceVersion, A's stale copy conflicts.
    const updated = await raw(b, 'PUT', `${CM}/one`, { body: { ...got.json, data: { v: '2' } } });
    expect(updated.status).toBe(200);
    const stale = await raw(a, 'PUT', `${CM}/one`, { body: { ...got.json, data: { v: '3' } } });
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
    expect((await raw(a, 'DELETE', `${CM}/one`)).status).toBe(200);
    expect((await raw(b, 'GET', `${CM}/one`)).status).toBe(404);
    const events = await watch.waitFor(3);
    expect(events.map((e: { type: string }) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    watch.close();
  });

  it("update through one replica what the other changed since, deciding on etcd's state and never on a stale copy", async () => {
    // A wrote it, so A holds a copy and updates without reading. Nothing in A watches Leases, so
    // B's writes leave that copy stale (a ConfigMap's would catch up through the root CA publisher's watch).
    const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const lease = (holder: string) => ({ holderIdentity: holder });
    const made = await raw(a, 'POST', LEASES, { body: { metadata: { name: 'two' }, spec: lease('1') } });
    expect(made.status).toBe(201);
    const byB = await raw(b, 'PUT', `${LEASES}/two`, { body: { ...made.json, spec: lease('2') } });
    expect(byB.status).toBe(200);
    // The resourceVersion B returned is a precondition A's copy fails and etcd's state passes.
    const fresh = await raw(a, 'PUT', `${LEASES}/two`, { body: { ...byB.json, spec: lease('3') } });
    expect([fresh.status, fresh.json.spec]).toEqual([200, lease('3')]);
    expect(Number(fresh.json.metadata.resourceVersion)).toBeGreaterThan(Number(byB.json.metadata.resourceVersion));
    // An unconditional PUT of what A's copy holds changes etcd's state (B's): it is written.
    const byB2 = await raw(b, 'PUT', `${LEASES}/two`, { body: { ...fresh.json, spec: lease('4') } });
    const { resourceVersion: _, ...meta } = fresh.json.metadata;
    const back = await raw(a, 'PUT', `${LEASES}/two`, { body: { ...fresh.json, metadata: meta } });
    expect([back.status, back.json.spec]).toEqual([200, lease('3')]);
    expect(Number(back.json.metadata.resourceVersion)).toBeGreaterThan(Number(byB2.json.metadata.resourceVersion));
    // Nothing to change against etcd's state (B's), though A's copy differs: no write, B's resourceVersion.
    const byB3 = await raw(b, 'PUT', `${LEASES}/two`, { body: { ...back.json, spec: lease('5') } });
    const same = await raw(a, 'PUT', `${LEASES}/two`, { body: { ...byB3.json } });
    expect([same.status, same.json.metadata.resourceVersion, same.json.spec]).toEqual([200, byB3.json.metadata.resourceVersion, lease('5')]);
    // A patch without a resourceVersion lands on B's latest write, not on A's copy.
    const byB4 = await raw(b, 'PUT', `${LEASES}/two`, { body: { ...byB3.json, spec: lease('6') } });
    expect(byB4.status).toBe(200);
    const patched = await raw(a, 'PATCH', `${LEASES}/two`, { body: { spec: { leaseDurationSeconds: 40 } }, contentType: 'application/merge-patch+json' });
    expect([patched.status, patched.json.spec]).toEqual([200, { ...lease('6'), leaseDurationSeconds: 40 }]);
    // Deleted through B: A's PUT creates it anew (Leases allow create on update), whatever A held.
    expect((await raw(b, 'DELETE', `${LEASES}/two`)).status).toBe(200);
    const { resourceVersion: __, uid: ___, ...later } = patched.json.metadata;
    const again = await raw(a, 'PUT', `${LEASES}/two`, { body: { ...patched.json, metadata: later, spec: lease('7') } });
    expect([again.status, again.json.spec]).toEqual([201, lease('7')]);
    expect(again.json.metadata.uid).not.toBe(made.json.metadata.uid);
  });

  it('authorize through one replica by RBAC objects written through the other', async () => {
    const asAlice = { token: 'alice-token' };
    expect((await raw(b, 'GET', CM, asAlice)).status).toBe(403);
    const role = { metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] };
    expect((await raw(a, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: role })).status).toBe(201);
    const binding = {
      metadata: { name: 'alice-cm-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cm-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    };
    expect((await raw(a, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: binding })).status).toBe(201);
    expect((await raw(b, 'GET', CM, asAlice)).status).toBe(200);
    expect((await raw(b, 'DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/alice-cm-reader')).status).toBe(200);
    // A revoked grant leaves the other replica's RBAC index (kept by a watch) within a watch round
    // trip, as it leaves kube-apiserver's informers; a grant is confirmed against the store at once.
    await until(async () => (await raw(a, 'GET', CM, asAlice)).status === 403, 5000);
  });

  it('authenticate through one replica the tokens whose objects the other wrote or removed', async () => {
    const secret = {
      metadata: { name: 'bootstrap-token-abcdef' },
      type: 'bootstrap.kubernetes.io/token',
      stringData: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' },
    };
    expect((await raw(a, 'POST', '/api/v1/namespaces/kube-system/secrets', { body: secret })).status).toBe(201);
    const who = await raw(b, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token: 'abcdef.0123456789abcdef', body: {} });
    expect([who.status, who.json.status?.userInfo?.username]).toEqual([201, 'system:bootstrap:abcdef']);

    expect((await raw(a, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'ci' } } })).status).toBe(201);
    const tr = await raw(a, 'POST', '/api/v1/namespaces/default/serviceaccounts/ci/token', { body: { spec: {} } });
    const token = tr.json.status.token as string;
    const self = await raw(b, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token, body: {} });
    expect([self.status, self.json.status?.userInfo?.username]).toEqual([201, 'system:serviceaccount:default:ci']);
    expect((await raw(b, 'DELETE', '/api/v1/namespaces/default/serviceaccounts/ci')).status).toBe(200);
    expect((await raw(a, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token, body: {} })).status).toBe(401);
  });

  it('authenticate bootstrap tokens from a watch-fed cache on each replica: a deleted token stops working once the delete reaches it, an expired one at once', async () => {
    const review = (s: TestServer, token: string): Promise<number> =>
      raw(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token, body: {} }).then((r) => r.status);
    const secret = (id: string, expiration?: string) => ({
      metadata: { name: `bootstrap-token-${id}` },
      type: 'bootstrap.kubernetes.io/token',
      stringData: { 'token-id': id, 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', ...(expiration ? { expiration } : {}) },
    });
    expect((await raw(a, 'POST', '/api/v1/namespaces/kube-system/secrets', { body: secret('ghijkl') })).status).toBe(201);
    // Once the create's watch event reached b, b authenticates the token without reading etcd.
    await until(async () => {
      const before = await secretReads(b);
      return (await review(b, 'ghijkl.0123456789abcdef')) === 201 && (await secretReads(b)) === before;
    }, 5000);

    // As with kube-apiserver's informers, the deletion ends the token on b within a watch round trip.
    expect((await raw(a, 'DELETE', '/api/v1/namespaces/kube-system/secrets/bootstrap-token-ghijkl')).status).toBe(200);
    await until(async () => (await review(b, 'ghijkl.0123456789abcdef')) === 401, 5000);

    // Expiry needs no event: the first request after it is refused.
    const expiration = new Date(Date.now() + 2000);
    expect((await raw(a, 'POST', '/api/v1/namespaces/kube-system/secrets', { body: secret('mnopqr', expiration.toISOString()) })).status).toBe(201);
    await until(async () => {
      const before = await secretReads(b);
      return (await review(b, 'mnopqr.0123456789abcdef')) === 201 && (await secretReads(b)) === before;
    }, 1500);
    await new Promise((r) => setTimeout(r, expiration.getTime() - Date.now() + 10));
    expect(await review(b, 'mnopqr.0123456789abcdef')).toBe(401);
  });

  it("read etcd once for the bootstrap-token cache misses of one turn, and see in that read a token written through the other replica", async () => {
    const registry = new Registry();
    const store = await EtcdStore.open({ endpoints: etcd.endpoints, metrics: new EtcdMetrics(registry) });
    const cache = new BootstrapTokenSecrets(store);
    try {
      await until(async () => cache.ready());
      const authenticator = createBootstrapTokenAuthenticator({ objects: objectReader(store), secrets: cache, now: () => new Date() });
      const secret = {
        metadata: { name: 'bootstrap-token-stuvwx' },
        type: 'bootstrap.kubernetes.io/token',
        stringData: { 'token-id': 'stuvwx', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' },
      };
      expect((await raw(a, 'POST', '/api/v1/namespaces/kube-system/secrets', { body: secret })).status).toBe(201);
      const before = await secretReads(registry);
      // Made-up ids, as an anonymous client would send, and the new token among them.
      const ids = Array.from({ length: 50 }, (_, i) => (i === 31 ? 'stuvwx' : `n${String(i).padStart(5, '0')}`));
      const users = await Promise.all(ids.map(async (id) => (await authenticator.authenticateToken(`${id}.0123456789abcdef`))?.username));
      expect(users.filter((u) => u !== undefined)).toEqual(['system:bootstrap:stuvwx']);
      expect((await secretReads(registry)) - before).toBe(1);
    } finally {
      cache.stop();
      await store.close();
    }
  });

  it('finish deleting a namespace whose last content left through the other replica', async () => {
    expect((await raw(a, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'fin' } } })).status).toBe(201);
    const held = { metadata: { name: 'held', finalizers: ['example.com/hold'] } };
    expect((await raw(a, 'POST', '/api/v1/namespaces/fin/configmaps', { body: held })).status).toBe(201);
    expect((await raw(a, 'DELETE', '/api/v1/namespaces/fin')).status).toBe(200);
    await until(async () => (await raw(b, 'GET', '/api/v1/namespaces/fin/configmaps/held')).json.metadata?.deletionTimestamp !== undefined);
    expect((await raw(b, 'GET', '/api/v1/namespaces/fin')).json.status.phase).toBe('Terminating');

    const patch = { metadata: { finalizers: null } };
    const released = await raw(b, 'PATCH', '/api/v1/namespaces/fin/configmaps/held', { body: patch, contentType: 'application/merge-patch+json' });
    expect(released.status).toBe(200);
    await until(async () => (await raw(a, 'GET', '/api/v1/namespaces/fin')).status === 404);
  }, 20_000);

  it('keep objects in etcd where kube-apiserver does, without resourceVersion, and Events on a lease', async () => {
    expect((await raw(a, 'POST', CM, { body: { metadata: { name: 'layout' } } })).status).toBe(201);
    const event = { metadata: { name: 'e1' }, involvedObject: { kind: 'ConfigMap', name: 'layout', namespace: 'default' }, reason: 'Test' };
    expect((await raw(a, 'POST', '/api/v1/namespaces/default/events', { body: event })).status).toBe(201);
    const keys = (await client.getAll().prefix('/registry/').keys()).sort();
    expect(keys).toEqual(expect.arrayContaining(['/registry/configmaps/default/layout', '/registry/namespaces/default', '/registry/events/default/e1']));
    expect(keys).toContain('/registry/clusterrolebindings/kubeadm:node-autoapprove-bootstrap');
    expect(keys.filter((k) => k.startsWith('/registry/core/'))).toEqual([]);
    const stored = JSON.parse((await client.get('/registry/configmaps/default/layout').string()) ?? '{}');
    expect(stored.metadata.name).toBe('layout');
    expect(stored.metadata.resourceVersion).toBeUndefined();

    const range = await client.kv.range({ key: Buffer.from('/registry/events/default/e1') });
    const lease = range.kvs[0]?.lease ?? '0';
    expect(lease).not.toBe('0');
    const ttl = await client.leaseClient.leaseTimeToLive({ ID: lease });
    expect(Number(ttl.grantedTTL)).toBeGreaterThanOrEqual(600);
    expect(Number(ttl.grantedTTL)).toBeLessThanOrEqual(660);
    expect((await client.kv.range({ key: Buffer.from('/registry/configmaps/default/layout') })).kvs[0]?.lease).toBe('0');
  });
});

it('gives replicas that set up an empty data directory at the same moment one CA and one set of keys', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'identity-race-'));
  try {
    const ids = await Promise.all([ensureCredentials(dir), ensureCredentials(dir), ensureCredentials(dir)]);
    const onDisk = await ensureCredentials(dir);
    for (const id of ids) {
      expect([id.caPem, id.caKeyPem, id.serviceAccountKeyPem, id.adminCertPem, id.servingCertPem]).toEqual([
        onDisk.caPem,
        onDisk.caKeyPem,
        onDisk.serviceAccountKeyPem,
        onDisk.adminCertPem,
        onDisk.servingCertPem,
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
