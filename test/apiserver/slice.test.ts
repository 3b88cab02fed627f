import { CoreV1Api, type KubernetesObject, makeInformer, type V1ServiceAccount } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe('ServiceAccount through client-node', () => {
  it('creates, reads, lists, updates and deletes', async () => {
    const api = server.kubeConfig.makeApiClient(CoreV1Api);
    const created = await api.createNamespacedServiceAccount({
      namespace: 'default',
      body: { metadata: { name: 'builder', labels: { team: 'a' } } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(created.metadata?.resourceVersion).toMatch(/^\d+$/);

    const read = await api.readNamespacedServiceAccount({ name: 'builder', namespace: 'default' });
    expect(read.metadata?.uid).toBe(created.metadata?.uid);

    const list = await api.listNamespacedServiceAccount({ namespace: 'default' });
    expect(list.items.map((i) => i.metadata?.name).sort()).toEqual(['builder', 'default']);
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata?.resourceVersion));

    read.automountServiceAccountToken = false;
    const updated = await api.replaceNamespacedServiceAccount({ name: 'builder', namespace: 'default', body: read });
    expect(updated.automountServiceAccountToken).toBe(false);
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(read.metadata?.resourceVersion));

    await api.deleteNamespacedServiceAccount({ name: 'builder', namespace: 'default' });
    await expect(api.readNamespacedServiceAccount({ name: 'builder', namespace: 'default' })).rejects.toMatchObject({ code: 404 });
  });

  it('feeds an informer: initial list, then add, update and delete events', async () => {
    const api = server.kubeConfig.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1ServiceAccount>(server.kubeConfig, '/api/v1/namespaces/default/serviceaccounts', () =>
      api.listNamespacedServiceAccount({ namespace: 'default' }),
    );
    const seen: string[] = [];
    const record = (type: string) => (obj: KubernetesObject) => seen.push(`${type}:${obj.metadata?.name}`);
    informer.on('add', record('add'));
    informer.on('update', record('update'));
    informer.on('delete', record('delete'));
    await informer.start();
    try {
      await api.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'watched' } } });
      await api.patchNamespacedServiceAccount({
        name: 'watched',
        namespace: 'default',
        body: [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }],
      });
      await api.deleteNamespacedServiceAccount({ name: 'watched', namespace: 'default' });
      const deadline = Date.now() + 5000;
      while (!seen.includes('delete:watched') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen).toEqual(['add:default', 'add:watched', 'update:watched', 'delete:watched']);
    } finally {
      await informer.stop();
    }
  });
});
