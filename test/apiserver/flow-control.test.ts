/**
 * Overload is shed, as kube-apiserver sheds it: a storm of CSR creates and lists from a bootstrap
 * token at four times what the workload level holds (seats plus queue) gets 429 TooManyRequests
 * with Retry-After and upstream's message, while a node renewing its Lease, the cluster admin and the
 * health checks are all served; once the storm stops, the storm's user is served again. The limits
 * are made tiny (3 seats) so that a few dozen concurrent requests are a storm.
 */
import { CSR_PATH, kubeletCsrObject, kubeletCsrPems } from '../../bench/lib/kubelet-csr.js';
import { raw, type RawResponse, TOO_MANY_REQUESTS, tooManyRequests } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const NODE_TOKEN = 'node-n1-token';
const STORM_TOKEN = 'storm-token';
const TOKENS = [
  `${NODE_TOKEN},system:node:n1,uid-n1,system:nodes`,
  `${STORM_TOKEN},system:bootstrap:storm,uid-storm,"system:bootstrappers,system:bootstrappers:kubeadm:default-node-token"`,
].join('\n');
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
/** The workload level holds 3 executing and 2 queued: the storm is four times that. */
const STORM_CLIENTS = 4 * (3 + 2);

let server: TestServer;
const target = () => ({ url: server.url, caPem: server.caPem, admin: server.admin });

beforeAll(async () => {
  server = await startTestServer({
    tokenFile: `${TOKENS}\n`,
    flowControl: {
      // 4 seats: 3 of them workload's (its 125 of the 215 shares, rounded up).
      maxRequestsInflight: 3,
      maxMutatingRequestsInflight: 1,
      queuing: { workload: { queues: 1, queueLengthLimit: 2, handSize: 1 } },
    },
  });
});

afterAll(async () => {
  await server.close();
});

function lease(renewTime: string, resourceVersion?: string): object {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'n1', namespace: 'kube-node-lease', ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime },
  };
}

const microTime = (): string => new Date().toISOString().replace('Z', '000Z');

it('sheds a storm at four times the capacity with 429s, never a Lease renewal, and recovers', async () => {
  const [pem = ''] = await kubeletCsrPems(1);
  const created = await raw(target(), 'POST', LEASES, { token: NODE_TOKEN, body: lease(microTime()) });
  expect(created.status).toBe(201);
  let rv = String(created.json.metadata.resourceVersion);

  let storming = true;
  const storm: RawResponse[] = [];
  let seq = 0;
  const stormClient = async (i: number): Promise<void> => {
    while (storming) {
      const res = i % 2 === 0 ? await raw(target(), 'POST', CSR_PATH, { token: STORM_TOKEN, body: kubeletCsrObject(`storm-${seq++}`, pem) }) : await raw(target(), 'GET', CSR_PATH, { token: STORM_TOKEN });
      storm.push(res);
    }
  };
  const clients = Array.from({ length: STORM_CLIENTS }, (_, i) => stormClient(i));

  // Meanwhile the node renews its Lease, the admin reads and the health checks are probed.
  const renewals: number[] = [];
  const others: string[] = [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && (storm.filter((r) => r.status === 429).length < 20 || renewals.length < 10)) {
    const renewed = await raw(target(), 'PUT', `${LEASES}/n1`, { token: NODE_TOKEN, body: lease(microTime(), rv) });
    renewals.push(renewed.status);
    if (renewed.status === 200) rv = String(renewed.json.metadata.resourceVersion);
    const [admin, healthz] = await Promise.all([raw(target(), 'GET', CSR_PATH), raw(target(), 'GET', '/readyz', { anonymous: true })]);
    others.push(`${admin.status} ${healthz.status}`);
  }
  storming = false;
  await Promise.all(clients);

  const shed = storm.filter((r) => r.status === 429);
  expect(shed.length).toBeGreaterThanOrEqual(20);
  expect(storm.filter((r) => r.status !== 429 && r.status !== 200 && r.status !== 201).map((r) => `${r.status} ${r.text}`)).toEqual([]);
  // The first shed request is told 1 s; the level's later ones what its recent sheds say (1-32 s), header and Status alike.
  expect(shed[0]?.headers['retry-after']).toBe('1');
  expect(shed[0]?.json).toEqual(TOO_MANY_REQUESTS);
  for (const r of shed) {
    const seconds = Number(r.headers['retry-after']);
    expect(seconds >= 1 && seconds <= 32 && Number.isInteger(seconds)).toBe(true);
    expect(r.json).toEqual(tooManyRequests(seconds));
  }
  expect(renewals.length).toBeGreaterThanOrEqual(10);
  expect(renewals.filter((s) => s !== 200)).toEqual([]);
  expect(others.filter((s) => s !== '200 200')).toEqual([]);

  // Recovered: the storm's user is served again.
  const after = await raw(target(), 'POST', CSR_PATH, { token: STORM_TOKEN, body: kubeletCsrObject('after-the-storm', pem) });
  expect(after.status).toBe(201);

  const metrics = (await raw(target(), 'GET', '/metrics')).text;
  const sample = (name: string, labels: string): number => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 'NaN');
  const rejected = (reason: string): number => sample('apiserver_flowcontrol_rejected_requests_total', `priority_level="workload",flow_schema="global-default",reason="${reason}"`) || 0;
  expect(rejected('queue-full') + rejected('time-out')).toBe(shed.length);
  expect(sample('apiserver_dropped_requests_total', 'request_kind="mutating"') + sample('apiserver_dropped_requests_total', 'request_kind="readOnly"')).toBe(shed.length);
  expect(metrics).not.toMatch(/apiserver_flowcontrol_rejected_requests_total\{priority_level="node-high"/);
  expect(sample('apiserver_flowcontrol_dispatched_requests_total', 'priority_level="node-high",flow_schema="system-node-high"')).toBe(renewals.length + 1);
  expect(sample('apiserver_flowcontrol_nominal_limit_seats', 'priority_level="workload"')).toBe(3);
  expect(sample('apiserver_flowcontrol_current_inqueue_requests', 'priority_level="workload",flow_schema="global-default"')).toBe(0);
}, 60_000);
