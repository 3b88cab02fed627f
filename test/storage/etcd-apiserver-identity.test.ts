/**
 * Two API server replicas on one etcd, on one host and different ports: each keeps its identity
 * Lease in kube-system (upstream's APIServerIdentity, with its address as the peer-advertise
 * annotation), expired identity Leases are deleted, and the `kubernetes` Service is left alone
 * while it points at a live replica: no revision churn, while a user's change to anything else
 * (or to a port no replica serves) is still put back, and a replica that stops is taken over.
 * The periods are shortened (upstream's are 10 s, a 15 s TTL and an hourly GC).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EtcdStore } from '../../src/apiserver/storage/etcd/etcd.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { describeWithTools } from '../helpers/tools.js';
import { until } from '../helpers/wait.js';

const TIMING = { intervalMs: 300, liveTtlMs: 3_000, gcIntervalMs: 500 };
const SERVICE = '/api/v1/namespaces/default/services/kubernetes';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
const IDENTITY = 'apiserver.kubernetes.io/identity=kube-apiserver';
const MERGE = 'application/merge-patch+json';

interface Lease {
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string>; resourceVersion: string };
  spec: { holderIdentity: string; leaseDurationSeconds: number; renewTime: string };
}

const portOf = (s: TestServer): number => Number(new URL(s.url).port);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describeWithTools(['etcd'])('API server identity Leases and the kubernetes Service, two replicas on one etcd', () => {
  let etcd: EtcdCluster;
  let dataDir: string;
  let a: TestServer;
  let b: TestServer;
  const open: TestServer[] = [];

  const replica = async (): Promise<TestServer> => {
    const server = await startTestServer({ dataDir, store: await EtcdStore.open({ endpoints: etcd.endpoints }), controlPlaneTiming: TIMING });
    open.push(server);
    return server;
  };
  const service = async (via: TestServer) => {
    const got = await raw(via, 'GET', SERVICE);
    expect(got.status).toBe(200);
    return got.json as { metadata: { resourceVersion: string }; spec: { ports: { name: string; protocol: string; port: number; targetPort: unknown }[] } };
  };
  const identityLeases = async (via: TestServer): Promise<Lease[]> =>
    (await raw(via, 'GET', `${LEASES}?labelSelector=${encodeURIComponent(IDENTITY)}`)).json.items as Lease[];
  const patchService = (via: TestServer, ports: unknown) => raw(via, 'PATCH', SERVICE, { body: { spec: { ports } }, contentType: MERGE });

  beforeAll(async () => {
    etcd = await startEtcd();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'identity-'));
    a = await replica();
    b = await replica();
  }, 30_000);
  afterAll(async () => {
    for (const server of open) await server.close();
    await etcd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('each replica keeps its own identity Lease, naming its host and address, renewed every period', async () => {
    const leases = await identityLeases(a);
    expect(leases.map((l) => l.metadata.annotations['kubernetes.io/peer-advertise-address']).sort()).toEqual([`127.0.0.1:${portOf(a)}`, `127.0.0.1:${portOf(b)}`].sort());
    for (const lease of leases) {
      expect(lease.metadata.name).toMatch(/^apiserver-[a-z2-7]{26}$/);
      expect(lease.metadata.labels).toEqual({ 'apiserver.kubernetes.io/identity': 'kube-apiserver', 'kubernetes.io/hostname': os.hostname() });
      expect(lease.spec.holderIdentity).toMatch(new RegExp(`^${lease.metadata.name}_[0-9a-f-]{36}$`));
      expect(lease.spec.leaseDurationSeconds).toBe(3600);
    }
    expect(new Set(leases.map((l) => l.metadata.name)).size).toBe(2);
    const first = leases[0]!;
    await until('a renewal', async () => (await identityLeases(b)).find((l) => l.metadata.name === first.metadata.name)!.spec.renewTime > first.spec.renewTime);
  });

  it('leave the kubernetes Service alone while it points at a live replica: no new revision over many periods', async () => {
    const before = await service(a);
    expect([portOf(a), portOf(b)]).toContain(before.spec.ports[0]!.targetPort);
    await sleep(TIMING.intervalMs * 10);
    expect((await service(b)).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it("put back a user's change to another field, keeping the live targetPort", async () => {
    const target = (await service(a)).spec.ports[0]!.targetPort;
    expect((await patchService(b, [{ name: 'https', protocol: 'TCP', port: 8443, targetPort: target }])).status).toBe(200);
    await until('the port put back', async () => (await service(a)).spec.ports[0]!.port === 443);
    expect((await service(a)).spec.ports).toEqual([{ name: 'https', protocol: 'TCP', port: 443, targetPort: target }]);
  });

  it('reset a targetPort no replica serves, and keep one another live replica serves', async () => {
    expect((await patchService(a, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 9 }])).status).toBe(200);
    await until('the targetPort reset', async () => (await service(a)).spec.ports[0]!.targetPort !== 9);
    const reset = await service(b);
    expect([portOf(a), portOf(b)]).toContain(reset.spec.ports[0]!.targetPort);

    const other = reset.spec.ports[0]!.targetPort === portOf(a) ? portOf(b) : portOf(a);
    const moved = await patchService(a, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: other }]);
    expect(moved.status).toBe(200);
    await sleep(TIMING.intervalMs * 10);
    const kept = await service(b);
    expect([kept.metadata.resourceVersion, kept.spec.ports[0]!.targetPort]).toEqual([moved.json.metadata.resourceVersion, other]);
  });

  it('delete expired identity Leases (one without renewTime too), and leave other Leases alone', async () => {
    const lease = (name: string, labels: Record<string, string>, spec: Record<string, unknown>) =>
      raw(a, 'POST', LEASES, { body: { metadata: { name, labels }, spec } });
    const old = { holderIdentity: 'gone', leaseDurationSeconds: 1, renewTime: '2020-01-01T00:00:00.000000Z' };
    expect((await lease('apiserver-gone', { 'apiserver.kubernetes.io/identity': 'kube-apiserver' }, old)).status).toBe(201);
    expect((await lease('apiserver-never', { 'apiserver.kubernetes.io/identity': 'kube-apiserver' }, { holderIdentity: 'never' })).status).toBe(201);
    expect((await lease('someone-else', { app: 'x' }, old)).status).toBe(201);
    await until('expired identity Leases deleted', async () => (await identityLeases(a)).length === 2);
    expect((await raw(a, 'GET', `${LEASES}/someone-else`)).status).toBe(200);
  });

  it('a replica that stops hands the Service over once its Lease is no longer live', async () => {
    const owner = (await service(a)).spec.ports[0]!.targetPort === portOf(a) ? a : b;
    const survivor = owner === a ? b : a;
    await owner.close();
    open.splice(open.indexOf(owner), 1);
    await until('the survivor takes the Service', async () => (await service(survivor)).spec.ports[0]!.targetPort === portOf(survivor), TIMING.liveTtlMs * 4);
  }, 30_000);
});
