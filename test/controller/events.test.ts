/** EventRecorder against the embedded API server: distinct names per Event, repeats bump the Event written. */
import { CoreV1Api } from '@kubernetes/client-node';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { EventRecorder } from '../../src/controller/events.js';
import { FakeClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('EventRecorder on the embedded API server', () => {
  let server: TestServer;
  let client: KubeClient;
  const clock = new FakeClock(Date.parse('2030-01-02T03:04:05Z'));

  beforeAll(async () => {
    server = await startTestServer();
    client = new KubeClient({ kubeConfig: server.kubeConfig, clock });
  });
  afterAll(async () => {
    client.close();
    await server.close();
  });

  const csr = (name: string) => ({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name, uid: `uid-${name}`, resourceVersion: '7' } });
  const eventsAbout = async (name: string) =>
    (await client.api(CoreV1Api).listNamespacedEvent({ namespace: 'default' })).items.filter((e) => e.involvedObject.name === name);

  it('writes one Event per distinct reason in the same millisecond, each with its own name', async () => {
    const rec = new EventRecorder({ client, clock, logger: silentLogger(), component: 'test' });
    for (let i = 0; i < 300; i++) await rec.record(csr('many'), 'Normal', `Reason${i}`, 'm');
    const events = await eventsAbout('many');
    expect(events).toHaveLength(300);
    const names = new Set(events.map((e) => e.metadata?.name));
    expect(names.size).toBe(300);
    for (const n of names) expect(n).toMatch(new RegExp(`^many\\.${clock.now().toString(16)}[0-9a-f]{4}$`));
    expect(events[0]).toMatchObject({ type: 'Normal', count: 1, source: { component: 'test' }, involvedObject: { kind: 'CertificateSigningRequest', uid: 'uid-many', resourceVersion: '7' } });
  });

  it('a repeat within the window bumps count and lastTimestamp of the Event already written', async () => {
    const rec = new EventRecorder({ client, clock, logger: silentLogger(), component: 'test' });
    await rec.record(csr('repeat'), 'Warning', 'Again', 'same message');
    clock.advance(5000);
    await rec.record(csr('repeat'), 'Warning', 'Again', 'same message');
    clock.advance(5000);
    await rec.record(csr('repeat'), 'Warning', 'Again', 'same message');
    const events = await eventsAbout('repeat');
    expect(events).toHaveLength(1);
    expect(events[0]?.count).toBe(3);
    expect(new Date(events[0]?.lastTimestamp ?? 0).getTime() - new Date(events[0]?.firstTimestamp ?? 0).getTime()).toBe(10_000);
  });
});
