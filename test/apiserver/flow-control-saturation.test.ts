/**
 * Overload on one event loop is shed, not suffered: with the server's own flags at their defaults
 * (--max-event-loop-delay 250ms, 600 seats, so no seat is ever short), the test blocks the event
 * loop it shares with the server in 400 ms turns, as a storm of TLS handshakes would. Workload
 * requests (a bootstrap token's CSR create and list, a node's watch of its pods) are then answered 429
 * with Retry-After and a Status at once, while a node's Lease renewal and the watch of its own Node,
 * the cluster admin and the readiness probe are served; once the loop is free again, the bootstrap
 * token and the pods watch are served again.
 */
import { CSR_PATH, kubeletCsrObject, kubeletCsrPems } from '../../bench/lib/kubelet-csr.js';
import { FLOW_CONTROL_DEFAULTS } from '../../src/apiserver/flowcontrol/flow-control.js';
import { raw, type RawResponse, TOO_MANY_REQUESTS, tooManyRequests } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const NODE_TOKEN = 'node-n1-token';
const BOOTSTRAP_TOKEN = 'bootstrap-token';
const TOKENS = [
  `${NODE_TOKEN},system:node:n1,uid-n1,system:nodes`,
  `${BOOTSTRAP_TOKEN},system:bootstrap:abcdef,uid-abcdef,"system:bootstrappers,system:bootstrappers:kubeadm:default-node-token"`,
].join('\n');
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
/** A kubelet's two informers' watches (system-nodes at the workload level, system-node-high), ended by the server after a second. */
const PODS_WATCH = `/api/v1/pods?watch=true&fieldSelector=${encodeURIComponent('spec.nodeName=n1')}&timeoutSeconds=1`;
const NODE_WATCH = `/api/v1/nodes?watch=true&fieldSelector=${encodeURIComponent('metadata.name=n1')}&timeoutSeconds=1`;

let server: TestServer;
const target = () => ({ url: server.url, caPem: server.caPem, admin: server.admin });

beforeAll(async () => {
  // The harness turns shedding off for tests that block their own loop; this one asks for the default.
  server = await startTestServer({ tokenFile: `${TOKENS}\n`, flowControl: FLOW_CONTROL_DEFAULTS });
});

afterAll(async () => {
  await server.close();
});

const microTime = (): string => new Date().toISOString().replace('Z', '000Z');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function lease(resourceVersion?: string): object {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'n1', namespace: 'kube-node-lease', ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: microTime() },
  };
}

/**
 * Keeps the event loop busy in `turnMs` turns until stopped: every turn of the loop is that late.
 * The next turn is an immediate, so the loop never sleeps between turns (a sleeping loop counts as
 * idle, and a loaded machine may wake it late).
 */
function blockLoop(turnMs: number): () => void {
  let running = true;
  const turn = (): void => {
    if (!running) return;
    const until = performance.now() + turnMs;
    while (performance.now() < until);
    setImmediate(turn);
  };
  setImmediate(turn);
  return () => {
    running = false;
  };
}

it('answers workload requests 429 while the event loop is saturated, serves Leases, the admin and probes, and recovers', async () => {
  const [pem = ''] = await kubeletCsrPems(1);
  let seq = 0;
  const createCsr = (): Promise<RawResponse> => raw(target(), 'POST', CSR_PATH, { token: BOOTSTRAP_TOKEN, body: kubeletCsrObject(`join-${seq++}`, pem) });
  const listCsrs = (): Promise<RawResponse> => raw(target(), 'GET', CSR_PATH, { token: BOOTSTRAP_TOKEN });

  // An idle server sheds nothing.
  const created = await raw(target(), 'POST', LEASES, { token: NODE_TOKEN, body: lease() });
  expect(created.status).toBe(201);
  let rv = String(created.json.metadata.resourceVersion);
  expect((await createCsr()).status).toBe(201);

  const unblock = blockLoop(400);
  const shed: RawResponse[] = [];
  let podsWatch: RawResponse | undefined;
  const served: string[] = [];
  try {
    // The smoothed delay needs about a second of a blocked loop to pass 250 ms.
    const deadline = Date.now() + 30_000;
    let first: RawResponse | undefined;
    while (Date.now() < deadline && first?.status !== 429) first = await createCsr();
    expect(first?.status).toBe(429);
    shed.push(first as RawResponse);
    // Still saturated: the storm's requests are all shed; the node's heartbeat, the admin and the probe go on.
    const [creates, lists, pods, renewed, nodeWatch, admin, ready] = await Promise.all([
      Promise.all([createCsr(), createCsr(), createCsr()]),
      Promise.all([listCsrs(), listCsrs()]),
      raw(target(), 'GET', PODS_WATCH, { token: NODE_TOKEN }),
      raw(target(), 'PUT', `${LEASES}/n1`, { token: NODE_TOKEN, body: lease(rv) }),
      raw(target(), 'GET', NODE_WATCH, { token: NODE_TOKEN }),
      raw(target(), 'GET', CSR_PATH),
      raw(target(), 'GET', '/readyz', { anonymous: true }),
    ]);
    shed.push(...creates, ...lists);
    podsWatch = pods;
    served.push(`lease ${renewed.status}`, `node watch ${nodeWatch.status}`, `admin ${admin.status}`, `readyz ${ready.status}`);
    if (renewed.status === 200) rv = String(renewed.json.metadata.resourceVersion);
  } finally {
    unblock();
  }

  expect(shed.map((r) => r.status)).toEqual([429, 429, 429, 429, 429, 429]);
  // A watch refused before it starts is an ordinary 429, as any request's.
  expect(podsWatch?.status).toBe(429);
  // The first is told 1 s; the rest what the workload level's recent sheds say, header and Status alike.
  expect(shed[0]?.headers['retry-after']).toBe('1');
  expect(shed[0]?.json).toEqual(TOO_MANY_REQUESTS);
  for (const r of [...shed, podsWatch as RawResponse]) {
    const seconds = Number(r.headers['retry-after']);
    expect(seconds >= 1 && seconds <= 32 && Number.isInteger(seconds)).toBe(true);
    expect(r.json).toEqual(tooManyRequests(seconds));
  }
  expect(served).toEqual(['lease 200', 'node watch 200', 'admin 200', 'readyz 200']);

  // Recovered: a second after the loop is free, nothing is shed.
  await sleep(1_500);
  const after: number[] = [];
  for (let i = 0; i < 5; i++) after.push((await createCsr()).status, (await listCsrs()).status);
  after.push((await raw(target(), 'PUT', `${LEASES}/n1`, { token: NODE_TOKEN, body: lease(rv) })).status);
  after.push((await raw(target(), 'GET', PODS_WATCH, { token: NODE_TOKEN })).status);
  expect(after).toEqual([201, 200, 201, 200, 201, 200, 201, 200, 201, 200, 200, 200]);

  const metrics = (await raw(target(), 'GET', '/metrics')).text;
  const sample = (name: string, labels = ''): number => Number(new RegExp(`^${name}${labels ? `\\{${labels}\\}` : ''} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 'NaN');
  const timedOut = sample('apiserver_flowcontrol_rejected_requests_total', 'priority_level="workload",flow_schema="global-default",reason="time-out"');
  const nodesTimedOut = sample('apiserver_flowcontrol_rejected_requests_total', 'priority_level="workload",flow_schema="system-nodes",reason="time-out"');
  const timeOuts = [...metrics.matchAll(/^apiserver_flowcontrol_rejected_requests_total\{[^}]*reason="time-out"\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  // Every 429 is counted once, as a time-out of the workload level: the pods watch under the nodes' flow schema.
  expect(timedOut).toBe(shed.length);
  expect(nodesTimedOut).toBe(1);
  expect(timeOuts).toBe(timedOut + nodesTimedOut);
  expect(metrics).not.toMatch(/apiserver_flowcontrol_rejected_requests_total\{priority_level="(node-high|exempt)"/);
  expect(sample('apiserver_dropped_requests_total', 'request_kind="mutating"') + sample('apiserver_dropped_requests_total', 'request_kind="readOnly"')).toBe(timeOuts);
  expect(sample('kube_identity_apiserver_event_loop_delay_seconds')).toBeLessThan(0.25);
  expect(sample('kube_identity_apiserver_event_loop_utilization')).toBeLessThan(0.9);
}, 90_000);
