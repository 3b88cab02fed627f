/**
 * The manager against the real embedded API server: leader election keeps exactly one runner active
 * and hands over when the leader stops; /readyz flips after sync; /metrics shows moving values.
 */
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { KObject } from '../../src/api/meta.js';
import { loadControllerConfig } from '../../src/config/load.js';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { clientListWatch } from '../../src/controller/informer/list-watch.js';
import { LeaderElectionLost } from '../../src/controller/runtime/election-lost.js';
import { Manager, watch } from '../../src/controller/runtime/manager.js';
import { runController } from '../../src/controller/run-controller.js';
import { realClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import type { ProbeServer } from '../../src/metrics/http.js';
import { startTestServer } from '../helpers/server.js';
import { ControlledListWatch, createLease, waitFor } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

let server: Server;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const election = (identity: string) => ({
  namespace: 'default',
  name: 'election-test',
  identity,
  leaseDurationMs: 2000,
  renewDeadlineMs: 1500,
  retryPeriodMs: 200,
});

describe('leader election', () => {
  it('never runs two leaders at once and the standby takes over after the leader stops', async () => {
    const client = new KubeClient({ kubeConfig: server.kubeConfig, clock: realClock });
    let active = 0;
    let maxActive = 0;
    const leaders: string[] = [];
    const start = (identity: string) => {
      const mgr = new Manager({ client, logger: silentLogger(), registry: new Registry(), clock: realClock, leaderElection: election(identity) });
      mgr.add({
        name: 'probe',
        needLeaderElection: true,
        start: async (signal) => {
          active++;
          maxActive = Math.max(maxActive, active);
          leaders.push(identity);
          await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
          active--;
        },
      });
      const stop = new AbortController();
      return { mgr, stop, done: mgr.run(stop.signal) };
    };
    const a = start('a');
    await waitFor('a leads', () => leaders.length === 1);
    const b = start('b');
    await new Promise((r) => setTimeout(r, 2500)); // longer than the lease: b must still be standby
    expect(leaders).toEqual(['a']);
    expect(b.mgr.isLeader()).toBe(false);
    a.stop.abort();
    await a.done;
    await waitFor('b takes over', () => leaders.length === 2, 5000);
    expect(leaders).toEqual(['a', 'b']);
    expect(maxActive).toBe(1);
    b.stop.abort();
    await b.done;
  });
});

describe('leadership lost', () => {
  it('ends the run with LeaderElectionLost even while a runnable that needs no leadership runs', async () => {
    const client = new KubeClient({ kubeConfig: server.kubeConfig, clock: realClock });
    const electionClient = new KubeClient({ kubeConfig: server.kubeConfig, clock: realClock });
    const opts = { ...election('a'), name: 'election-lost-test' };
    const mgr = new Manager({ client, leaderElectionClient: electionClient, logger: silentLogger(), registry: new Registry(), clock: realClock, leaderElection: opts });
    let alwaysStopped = false;
    const untilAborted = (signal: AbortSignal): Promise<void> => new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    mgr.add({ name: 'leading', needLeaderElection: true, start: untilAborted });
    mgr.add({
      name: 'always',
      needLeaderElection: false,
      start: (signal) => untilAborted(signal).then(() => void (alwaysStopped = true)),
    });
    const stop = new AbortController();
    const done = mgr.run(stop.signal);
    await waitFor('a leads', () => mgr.isLeader());
    // Another candidate takes the lease over (as after a renewal that failed past its deadline elsewhere).
    const api = client.api(CoordinationV1Api);
    const lease = await api.readNamespacedLease({ name: opts.name, namespace: opts.namespace });
    await api.replaceNamespacedLease({
      name: opts.name,
      namespace: opts.namespace,
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b', renewTime: new V1MicroTime(), leaseDurationSeconds: 60 } },
    });
    await expect(done).rejects.toBeInstanceOf(LeaderElectionLost);
    expect(alwaysStopped).toBe(true);
    expect(mgr.isLeader()).toBe(false);
    stop.abort();
    client.close();
    electionClient.close();
  });
});

describe('runController', () => {
  it('serves /readyz after sync and /metrics with moving values', async () => {
    const config = await loadControllerConfig({
      flags: {
        metricsBindAddress: '127.0.0.1:0',
        leaderElectionNamespace: 'default',
        leaderElectionId: 'run-controller-test',
        leaderElectionLeaseDuration: '3s',
        leaderElectionRenewDeadline: '2s',
        leaderElectionRetryPeriod: '200ms',
      },
    });
    const registry = new Registry();
    const stop = new AbortController();
    let release: () => void = () => {};
    let probe: ProbeServer | undefined;
    const reconciled: string[] = [];
    const run = runController(config, {
      logger: silentLogger(),
      registry,
      kubeConfig: server.kubeConfig,
      signal: stop.signal,
      hostname: 'test-host',
      onListening: (s) => (probe = s),
      register: (mgr, client) => {
        const lw = new ControlledListWatch<KObject>(clientListWatch(client, { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace: 'default' }));
        lw.gate = new Promise<void>((r) => (release = r));
        const leases = mgr.informer({ name: 'leases', resource: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' }, listWatch: lw });
        mgr.addController({
          name: 'lease-watcher',
          workers: 2,
          watches: [watch(leases)],
          reconciler: { reconcile: async (key) => (reconciled.push(key), 'done') },
        });
      },
    });
    await waitFor('probe server', () => probe !== undefined);
    const url = (probe as ProbeServer).url;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(500);
    release();
    await waitFor('ready', async () => (await fetch(`${url}/readyz`)).status === 200);

    const client = new KubeClient({ kubeConfig: server.kubeConfig, clock: realClock });
    const metrics = async (): Promise<string> => (await fetch(`${url}/metrics`)).text();
    const sample = (text: string, re: RegExp): number => Number(text.match(re)?.[1] ?? NaN);
    await waitFor('leader', async () => sample(await metrics(), /leader_election_master_status\{name="run-controller-test"\} (\d+)/) === 1);
    const before = await metrics();
    await createLease(client, 'metrics-1');
    await createLease(client, 'metrics-2');
    await waitFor('reconciled', () => reconciled.includes('default/metrics-2'));
    const after = await metrics();
    const adds = /workqueue_adds_total\{name="lease-watcher"\} (\d+)/;
    const success = /controller_runtime_reconcile_total\{controller="lease-watcher",result="success"\} (\d+)/;
    expect(sample(after, adds)).toBeGreaterThan(sample(before, adds));
    expect(sample(after, success)).toBeGreaterThan(sample(before, success));
    expect(sample(after, /rest_client_requests_total\{code="200",method="GET",host="[^"]+"\} (\d+)/)).toBeGreaterThan(0);
    expect(sample(after, /controller_runtime_max_concurrent_reconciles\{controller="lease-watcher"\} (\d+)/)).toBe(2);
    for (const name of ['workqueue_depth', 'workqueue_queue_duration_seconds_bucket', 'workqueue_work_duration_seconds_bucket', 'workqueue_retries_total', 'workqueue_unfinished_work_seconds', 'workqueue_longest_running_processor_seconds', 'controller_runtime_reconcile_time_seconds_bucket', 'controller_runtime_active_workers', 'rest_client_request_duration_seconds_bucket', 'process_cpu_user_seconds_total', 'kube_identity_informer_synced']) {
      expect(after).toContain(name);
    }
    stop.abort();
    await run;
  });
});
