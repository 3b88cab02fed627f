/** The event broadcaster against the embedded API server and kubectl, and against a slow or failing Events API. */
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { HttpStatusError } from '../../src/controller/client/kube-client.js';
import { apiSink, EventBroadcaster, type EventSink } from '../../src/controller/events/broadcaster.js';
import { FakeClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { kubectlFor } from '../kubectl/kubectl.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const csr = (name: string) => ({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name, uid: `uid-${name}`, resourceVersion: '7' } });

async function metric(registry: Registry, name: string, labels = ''): Promise<number> {
  const text = await registry.getSingleMetricAsString(name);
  return text
    .split('\n')
    .filter((l) => l.startsWith(name) && l.includes(labels))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('EventBroadcaster on the embedded API server', () => {
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

  const eventsAbout = async (name: string): Promise<CoreV1Event[]> =>
    (await client.api(CoreV1Api).listNamespacedEvent({ namespace: 'default' })).items.filter((e) => e.involvedObject.name === name);
  const broadcaster = (registry = new Registry()) => new EventBroadcaster({ sink: apiSink(client), clock, logger: silentLogger(), registry, instance: 'test-host' });

  it('writes an Event per decision that kubectl get events shows, with the events.k8s.io fields', async () => {
    const b = broadcaster();
    const rec = b.recorder('csrapproving');
    rec.event(csr('shown'), 'Normal', 'AutoApproved', 'Approve', 'Auto approving kubelet client certificate after SubjectAccessReview.');
    b.recorder('csrsigning-kubelet-client').event(csr('shown'), 'Normal', 'CertificateIssued', 'Sign', 'Certificate issued by signer kubernetes.io/kube-apiserver-client-kubelet');
    await b.flush();
    const events = await eventsAbout('shown');
    expect(events.map((e) => e.reason).sort()).toEqual(['AutoApproved', 'CertificateIssued']);
    const approved = events.find((e) => e.reason === 'AutoApproved');
    expect(approved).toMatchObject({
      type: 'Normal',
      action: 'Approve',
      reportingComponent: 'csrapproving',
      reportingInstance: 'test-host',
      source: { component: 'csrapproving' },
      involvedObject: { kind: 'CertificateSigningRequest', name: 'shown', uid: 'uid-shown', resourceVersion: '7' },
    });
    expect(approved?.metadata?.name).toMatch(new RegExp(`^shown\\.${clock.now().toString(16)}[0-9a-f]{4}$`));
    expect(approved?.series).toBeUndefined();
    const out = await kubectlFor(server)('get', 'events', '-n', 'default');
    expect(out.stderr).toBe('');
    expect(out.stdout).toMatch(/Normal\s+AutoApproved\s+certificatesigningrequest\/shown\s+Auto approving kubelet client certificate/);
    expect(out.stdout).toMatch(/Normal\s+CertificateIssued\s+certificatesigningrequest\/shown\s+Certificate issued by signer/);
  });

  it('makes a repeated reason one Event whose series counts the occurrences', async () => {
    const registry = new Registry();
    const b = broadcaster(registry);
    const rec = b.recorder('csrsigning-x');
    for (let i = 0; i < 5; i++) {
      rec.event(csr('repeat'), 'Warning', 'SignerValidationFailure', 'Sign', 'same message');
      clock.advance(1000);
    }
    await b.flush();
    const events = await eventsAbout('repeat');
    expect(events).toHaveLength(1);
    expect(events[0]?.series?.count).toBe(5);
    expect(new Date(events[0]?.series?.lastObservedTime ?? 0).getTime() - new Date(events[0]?.eventTime ?? 0).getTime()).toBe(4000);
    // One create, then one update carrying the count: not a request per occurrence.
    expect(await metric(registry, 'kube_identity_event_writes_total')).toBe(2);
    const wide = await kubectlFor(server)('get', 'events', '-n', 'default', '-o', 'wide', '--field-selector', 'involvedObject.name=repeat');
    expect(wide.stdout).toMatch(/Warning\s+SignerValidationFailure\s+certificatesigningrequest\/repeat\s+csrsigning-x, test-host\s+same message\s+\S+\s+5\s+repeat\./);
  });

  it('combines similar Events about many objects: a few requests for many CSRs', async () => {
    const registry = new Registry();
    const b = broadcaster(registry);
    const rec = b.recorder('csrsigning-many');
    for (let i = 0; i < 200; i++) rec.event(csr(`many-${i}`), 'Normal', 'CertificateIssued', 'Sign', 'Certificate issued by signer example.com/many');
    await b.flush();
    const all = (await client.api(CoreV1Api).listNamespacedEvent({ namespace: 'default' })).items.filter((e) => e.reportingComponent === 'csrsigning-many');
    expect(all.filter((e) => e.involvedObject.name).map((e) => e.involvedObject.name).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `many-${i}`).sort());
    const combined = all.filter((e) => !e.involvedObject.name);
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ message: '(combined from similar events): Certificate issued by signer example.com/many', series: { count: 190 } });
    expect(await metric(registry, 'kube_identity_event_writes_total')).toBeLessThanOrEqual(12);
  });
});

describe('EventBroadcaster with a slow or failing Events API', () => {
  const clock = new FakeClock(0);

  it('records without waiting, and drops beyond the queue instead of blocking', async () => {
    let started = 0;
    const hanging: EventSink = {
      create: () => {
        started++;
        return new Promise(() => undefined);
      },
      update: () => new Promise(() => undefined),
    };
    const registry = new Registry();
    const b = new EventBroadcaster({ sink: hanging, clock, logger: silentLogger(), registry, queueSize: 100 });
    const rec = b.recorder('slow');
    for (let i = 0; i < 150; i++) rec.event(csr(`slow-${i}`), 'Normal', `Reason${i}`, 'Sign', 'n');
    expect(started).toBe(1);
    // One write in flight, 100 waiting, the rest dropped and counted.
    expect(await metric(registry, 'kube_identity_events_dropped_total')).toBe(49);
    expect(await metric(registry, 'kube_identity_events_recorded_total')).toBe(150);
    expect(await metric(registry, 'kube_identity_event_queue_depth')).toBe(101);
  });

  it('a failing Events API costs a bounded number of tries and never throws into the caller', async () => {
    let tries = 0;
    const failing: EventSink = {
      create: () => {
        tries++;
        return Promise.reject(new HttpStatusError(503, { message: 'unavailable' }));
      },
      update: () => Promise.reject(new Error('unreachable')),
    };
    const registry = new Registry();
    const b = new EventBroadcaster({ sink: failing, clock, logger: silentLogger(), registry });
    b.recorder('failing').event(csr('f'), 'Warning', 'Oops', 'Sign', 'n');
    for (let i = 0; i < 5; i++) await b.flush();
    expect(tries).toBe(3);
    expect(await metric(registry, 'kube_identity_event_writes_total', 'result="error"')).toBe(3);
  });

  it('writes a growing series on the next tick, and what is queued at shutdown', async () => {
    const clock = new FakeClock(0);
    const written: { op: string; count: number }[] = [];
    const sink: EventSink = {
      create: (_ns, ev) => {
        written.push({ op: 'create', count: ev.series?.count ?? 1 });
        return Promise.resolve();
      },
      update: (_ns, _name, ev) => {
        written.push({ op: 'update', count: ev.series?.count ?? 1 });
        return Promise.resolve();
      },
    };
    const b = new EventBroadcaster({ sink, clock, logger: silentLogger(), registry: new Registry(), updateIntervalMs: 10_000 });
    const stop = new AbortController();
    const running = b.start(stop.signal);
    const rec = b.recorder('ticks');
    rec.event(csr('t'), 'Warning', 'Again', 'Sign', 'n');
    await b.flush();
    for (let i = 0; i < 4; i++) rec.event(csr('t'), 'Warning', 'Again', 'Sign', 'n');
    // Repeats within the interval wait for the tick: no request per occurrence.
    expect(written).toEqual([{ op: 'create', count: 1 }]);
    clock.advance(10_000);
    await new Promise((r) => setImmediate(r));
    expect(written).toEqual([{ op: 'create', count: 1 }, { op: 'update', count: 5 }]);
    rec.event(csr('t'), 'Warning', 'Again', 'Sign', 'n');
    rec.event(csr('u'), 'Normal', 'Other', 'Sign', 'n');
    stop.abort();
    await running;
    expect(written.slice(2)).toEqual(expect.arrayContaining([{ op: 'create', count: 1 }, { op: 'update', count: 6 }]));
  });
});
