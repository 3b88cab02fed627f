/**
 * Events as a user sees them with kubectl: one set of Events whichever group wrote them —
 * `kubectl get events` and `kubectl events` (core/v1) show what an events.k8s.io/v1 writer
 * (client-go's new recorder, client-node's EventsV1Api) recorded, `kubectl get events.events.k8s.io`
 * shows core/v1 Events, including the controller's — and RBAC decides per group.
 */
import { EventsV1Api, V1MicroTime } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { apiSink, EventBroadcaster } from '../../src/controller/events/broadcaster.js';
import { realClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, manifest } from './kubectl.js';

const NS = 'evns';
let s: TestServer;
let kubectl: ReturnType<typeof kubectlFor>;

beforeAll(async () => {
  s = await startTestServer();
  kubectl = kubectlFor(s);
  expect((await kubectl('create', 'namespace', NS)).code).toBe(0);
});
afterAll(async () => {
  await s.close();
});

/** Runs kubectl and returns its stdout, failing on a non-zero exit. */
async function ok(...args: string[]): Promise<string> {
  const r = await kubectl(...args);
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
  return r.stdout;
}

it('shows an Event created as events.k8s.io/v1 in kubectl get events and kubectl events', async () => {
  const file = manifest(s, 'ev-v1.yaml', {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'synced.1', namespace: NS },
    eventTime: '2026-11-25T06:00:00.000000Z',
    reportingController: 'example.com/syncer',
    reportingInstance: 'syncer-0',
    action: 'Sync',
    reason: 'Synced',
    type: 'Normal',
    regarding: { kind: 'Pod', name: 'web-1', namespace: NS },
    note: 'synced the pod',
  });
  expect(await ok('create', '-f', file)).toContain('event.events.k8s.io/synced.1 created');
  expect(await ok('get', 'events', '-n', NS)).toMatch(/Normal\s+Synced\s+pod\/web-1\s+synced the pod/);
  expect(await ok('get', 'events', '-n', NS, '--field-selector', 'involvedObject.name=web-1', '-o', 'jsonpath={.items[*].message}')).toBe('synced the pod');
  expect(await ok('events', '-n', NS)).toMatch(/Normal\s+Synced\s+Pod\/web-1\s+synced the pod/);
});

it('shows a core/v1 Event through events.k8s.io/v1, and deletes it through either', async () => {
  const file = manifest(s, 'ev-core.yaml', {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'backoff.1', namespace: NS },
    involvedObject: { kind: 'Pod', name: 'web-2', namespace: NS },
    reason: 'BackOff',
    message: 'Back-off restarting failed container',
    source: { component: 'kubelet', host: 'node-1' },
    count: 4,
    type: 'Warning',
  });
  expect(await ok('create', '-f', file)).toContain('event/backoff.1 created');
  const wide = await ok('get', 'events.v1.events.k8s.io', '-n', NS, '-o', 'wide');
  expect(wide).toMatch(/Warning\s+BackOff\s+pod\/web-2\s+kubelet, node-1\s+Back-off restarting failed container\s+\S+\s+4\s+backoff\.1/);
  const fields = await ok('get', 'events.events.k8s.io', 'backoff.1', '-n', NS, '-o', 'jsonpath={.note}|{.deprecatedCount}|{.regarding.name}');
  expect(fields).toBe('Back-off restarting failed container|4|web-2');
  expect(await ok('get', 'events.events.k8s.io', '-n', NS, '--field-selector', 'regarding.name=web-2', '-o', 'name')).toBe('event.events.k8s.io/backoff.1\n');
  expect(await ok('delete', 'events.events.k8s.io', 'backoff.1', '-n', NS)).toContain('deleted');
  const gone = await kubectl('get', 'events', 'backoff.1', '-n', NS);
  expect(gone.stderr).toContain('Error from server (NotFound): events "backoff.1" not found');
});

it('authorizes each group on its own resource', async () => {
  const role = manifest(s, 'core-events-reader.yaml', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'core-events-reader', namespace: NS },
    rules: [{ apiGroups: [''], resources: ['events'], verbs: ['get', 'list'] }],
  });
  await ok('apply', '-f', role);
  await ok('create', 'rolebinding', 'alice-events', '--role=core-events-reader', '--user=alice', '-n', NS);
  expect(await ok('get', 'events', '-n', NS, '--as', 'alice', '-o', 'name')).toContain('event/synced.1');
  const denied = await kubectl('get', 'events.events.k8s.io', '-n', NS, '--as', 'alice');
  expect(denied.code).not.toBe(0);
  expect(denied.stderr).toContain(
    'Error from server (Forbidden): events.events.k8s.io is forbidden: User "alice" cannot list resource "events" in API group "events.k8s.io" in the namespace "evns"',
  );
  expect((await kubectl('auth', 'can-i', 'list', 'events.events.k8s.io', '-n', NS, '--as', 'alice')).stdout.trim()).toBe('no');
});

describe('writers other than kubectl', () => {
  let client: KubeClient;
  beforeAll(() => {
    client = new KubeClient({ kubeConfig: s.kubeConfig, clock: realClock });
  });
  afterAll(() => client.close());

  it("shows the controller's Events through events.k8s.io/v1 too", async () => {
    const b = new EventBroadcaster({ sink: apiSink(client), clock: realClock, logger: silentLogger(), registry: new Registry(), instance: 'ctl-host' });
    const csr = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'node-csr-1', uid: 'uid-1' } };
    b.recorder('csrapproving').event(csr, 'Normal', 'AutoApproved', 'Approve', 'Auto approving kubelet client certificate after SubjectAccessReview.');
    await b.flush();
    const out = await ok('get', 'events.v1.events.k8s.io', '-n', 'default', '--field-selector', 'regarding.name=node-csr-1', '-o', 'wide');
    expect(out).toMatch(/Normal\s+AutoApproved\s+certificatesigningrequest\/node-csr-1\s+csrapproving, ctl-host\s+Auto approving kubelet client certificate/);
    const v1 = await raw(s, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name=node-csr-1');
    expect(v1.json.items[0]).toMatchObject({ reportingController: 'csrapproving', reportingInstance: 'ctl-host', action: 'Approve', deprecatedSource: { component: 'csrapproving' } });
  });

  it("shows client-node's EventsV1Api Events in kubectl get events", async () => {
    const api = s.kubeConfig.makeApiClient(EventsV1Api);
    await api.createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { name: 'from-client-node' },
        // MicroTime: a plain Date would be sent with milliseconds, which kube-apiserver refuses too.
        eventTime: new V1MicroTime('2026-11-25T06:30:00Z'),
        reportingController: 'example.com/client-node',
        reportingInstance: 'pod-7',
        action: 'Reconcile',
        reason: 'Reconciled',
        type: 'Normal',
        regarding: { kind: 'ConfigMap', name: 'settings', namespace: NS },
        note: 'reconciled settings',
      },
    });
    const wide = await ok('get', 'events', '-n', NS, '--field-selector', 'involvedObject.kind=ConfigMap', '-o', 'wide');
    expect(wide).toMatch(/Normal\s+Reconciled\s+configmap\/settings\s+example.com\/client-node, pod-7\s+reconciled settings/);
  });
});

it('deletes every Event of a namespace through events.k8s.io/v1 (deletecollection)', async () => {
  expect(await ok('get', 'events', '-n', NS, '-o', 'name')).not.toBe('');
  expect(await ok('delete', 'events.events.k8s.io', '--all', '-n', NS)).toContain('deleted');
  const left = await kubectl('get', 'events', '-n', NS);
  expect(left.stdout + left.stderr).toContain(`No resources found in ${NS} namespace.`);
});
