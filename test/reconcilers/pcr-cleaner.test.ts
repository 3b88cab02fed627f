/**
 * The PodCertificateRequest cleaner against the real server, run by the real controller with
 * exactly the RBAC the plain manifests give (deploy/, which the chart's rules equal:
 * test/deploy/chart.test.ts), as the kube-identity ServiceAccount. Requests are made by the node,
 * as its kubelet would; a fake clock stands in for the 15 minutes.
 */
import path from 'node:path';
import type { PodCertificateRequestV1beta1 } from '../../src/api/pod-certificates.js';
import { PcrCleaner } from '../../src/controller/cleaner/pcr-cleaner.js';
import { PCR_CLEANER_INTERVAL_MS, PCR_CLEANER_THRESHOLD_MS } from '../../src/controller/register.js';
import { FakeClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { PcrCleanerMetrics } from '../../src/metrics/cleaner.js';
import { DEPLOY_DIR, readKustomizeResources, type Obj } from '../deploy/manifests.js';
import { startController, startHarness, waitFor, type Harness, type RunningController } from './harness.js';
import { ecKey, PCRS, PodWorld } from './pod-world.js';

const SIGNER = 'example.com/workload';
const SA_TOKEN = 'kube-identity-sa-token';
const COLLECTIONS: Record<string, (ns: string) => string> = {
  ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  Role: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
  RoleBinding: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
};

let h: Harness;
let ctl: RunningController;
let world: PodWorld;

beforeAll(async () => {
  h = await startHarness([`${SA_TOKEN},system:serviceaccount:kube-identity:kube-identity,uid-kid,"system:serviceaccounts,system:serviceaccounts:kube-identity"`]);
  world = new PodWorld(h);
  await world.create('/api/v1/namespaces', { metadata: { name: 'kube-identity' } });
  for (const doc of readKustomizeResources(path.join(DEPLOY_DIR, 'kustomization.yaml'))) {
    const collection = COLLECTIONS[String(doc.kind)];
    if (collection) await world.create(collection(String((doc.metadata as Obj).namespace ?? 'kube-identity')), doc);
  }
  await world.setUp(['api']);
  await world.pod('api-0', 'api', [SIGNER]);
  ctl = await startController(h, { controllerNamespace: 'kube-identity', trustBundleNamespace: 'kube-identity' }, {}, SA_TOKEN);
}, 60_000);
afterAll(async () => {
  await ctl?.stop();
  await h?.close();
});

const exists = async (name: string): Promise<boolean> => (await h.call('admin', 'GET', `${PCRS}/${name}`)).status === 200;
const createdAt = (pcr: Readonly<PodCertificateRequestV1beta1> | undefined): number => Date.parse(pcr?.metadata?.creationTimestamp ?? '');

describe('podcertificaterequest-cleaner-controller', () => {
  it('is registered where PodCertificateRequests are served, with kube-controller-manager\'s 15 minutes every 5', () => {
    expect(ctl.registered.pcrCleaner?.cleaner.name).toBe('podcertificaterequest-cleaner-controller');
    expect([PCR_CLEANER_THRESHOLD_MS, PCR_CLEANER_INTERVAL_MS]).toEqual([15 * 60_000, 5 * 60_000]);
  });

  it('deletes requests 15 minutes after creation whatever their state, keeps younger ones, and counts the deletes', async () => {
    const pending = await world.requestFor('api-0', 'api', ecKey(), { signerName: SIGNER });
    const denied = await world.requestFor('api-0', 'api', ecKey(), { signerName: SIGNER });
    const pcr = (await h.call('admin', 'GET', `${PCRS}/${denied}`)).body;
    const deny = { type: 'Denied', status: 'True', reason: 'UnsupportedKeyType', message: 'no', lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') };
    expect((await h.call('admin', 'PUT', `${PCRS}/${denied}/status`, { ...pcr, status: { conditions: [deny] } })).status).toBe(200);
    // creationTimestamp has whole seconds: the young request is created in a later second.
    await new Promise((r) => setTimeout(r, 1100));
    const young = await world.requestFor('api-0', 'api', ecKey(), { signerName: SIGNER });

    const { informer } = ctl.registered.pcrCleaner ?? {};
    const store = informer!.store;
    await waitFor('the cleaner\'s cache has all three', async () => ([pending, denied, young].every((n) => store.get(`default/${n}`)) ? true : undefined));
    const oldest = Math.max(createdAt(store.get(`default/${pending}`)), createdAt(store.get(`default/${denied}`)));
    expect(createdAt(store.get(`default/${young}`))).toBeGreaterThan(oldest);

    const clock = new FakeClock(oldest + PCR_CLEANER_THRESHOLD_MS);
    const metrics = PcrCleanerMetrics.for(ctl.registry);
    const cleaner = new PcrCleaner({ client: ctl.client, version: 'v1', pcrs: store, clock, logger: silentLogger(), metrics, thresholdMs: PCR_CLEANER_THRESHOLD_MS, intervalMs: PCR_CLEANER_INTERVAL_MS });
    expect((await cleaner.runOnce()).sort()).toEqual([`default/${denied}`, `default/${pending}`].sort());
    expect([await exists(pending), await exists(denied), await exists(young)]).toEqual([false, false, true]);
    expect((await metrics.deletions.get()).values.find((v) => v.labels.result === 'deleted')?.value).toBe(2);

    // A second before its 15 minutes the young request stays; at them it goes.
    clock.advance(createdAt(store.get(`default/${young}`)) - oldest - 1000);
    await waitFor('the cache saw the deletes', async () => (store.size() === 1 ? true : undefined));
    expect(await cleaner.runOnce()).toEqual([]);
    clock.advance(1000);
    expect(await cleaner.runOnce()).toEqual([`default/${young}`]);
  });

  it('leaves a request re-created under the same name (uid precondition) and takes one already gone in stride', async () => {
    const name = await world.requestFor('api-0', 'api', ecKey(), { signerName: SIGNER });
    const store = ctl.registered.pcrCleaner!.informer.store;
    const stale = await waitFor('cached', async () => store.get(`default/${name}`));
    const gone = { ...stale, metadata: { ...stale.metadata, name: 'never-existed' } };
    const recreated = { ...stale, metadata: { ...stale.metadata, uid: 'an-older-uid' } };
    const metrics = PcrCleanerMetrics.for(ctl.registry);
    const before = async (result: string): Promise<number> => (await metrics.deletions.get()).values.find((v) => v.labels.result === result)?.value ?? 0;
    const [conflicts, gones] = [await before('conflict'), await before('gone')];
    const cleaner = new PcrCleaner({
      client: ctl.client,
      version: 'v1',
      pcrs: { list: () => [recreated, gone] },
      clock: new FakeClock(Date.now() + PCR_CLEANER_THRESHOLD_MS + 60_000),
      logger: silentLogger(),
      metrics,
      thresholdMs: PCR_CLEANER_THRESHOLD_MS,
      intervalMs: PCR_CLEANER_INTERVAL_MS,
    });
    expect(await cleaner.runOnce()).toEqual([]);
    expect(await exists(name)).toBe(true);
    expect([await before('conflict'), await before('gone')]).toEqual([conflicts + 1, gones + 1]);
  });
});
