/**
 * The API server's /metrics, scraped after real requests: kube-apiserver's names and labels, the
 * authorization of the scrape (`get` on the non-resource URL /metrics), and kubectl get --raw.
 */
import { execFile } from 'node:child_process';
import { jest } from '@jest/globals';
import { promisify } from 'node:util';
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { SYSTEM_NAMESPACES } from '../../src/apiserver/registry/core/namespace.js';
import { until } from '../helpers/wait.js';
import type { Store } from '../../src/apiserver/storage/store.js';

/** The samples of a Prometheus text exposition: `name{labels}` (labels sorted) → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}="${v}"`).sort();
    out.set(labels.length > 0 ? `${m[1]}{${labels.join(',')}}` : m[1]!, Number(m[3]));
  }
  return out;
}

function sample(all: Map<string, number>, name: string, labels: Record<string, string>): number | undefined {
  const key = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort();
  return all.get(`${name}{${key.join(',')}}`);
}

const request = (verb: string, scope: string, code: string, resource = 'configmaps') => ({
  verb,
  group: '',
  version: 'v1',
  resource,
  subresource: '',
  scope,
  component: 'apiserver',
  code,
});

describe('API server /metrics', () => {
  let server: TestServer;
  const scrape = async (): Promise<Map<string, number>> => {
    const res = await raw(server, 'GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return samples(res.text);
  };

  beforeAll(async () => {
    server = await startTestServer({ storage: 'sqlite', tokenFile: 'alice-token,alice,alice-uid\n', countMetricPollPeriodMs: 100, dbMetricPollIntervalMs: 100 });
  });
  afterAll(() => server.close());

  it('counts requests by kube-apiserver labels, with latencies, storage and identity counters', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm1' } };
    expect((await raw(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm })).status).toBe(201);
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps/m1')).status).toBe(200);
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps/absent')).status).toBe(404);
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
    expect((await raw(server, 'GET', '/api/v1/configmaps')).status).toBe(200);
    expect((await raw(server, 'GET', '/api/v1/configmaps', { token: 'not-a-token' })).status).toBe(401);
    expect((await raw(server, 'GET', '/api/v1/configmaps', { token: 'alice-token' })).status).toBe(403);

    // The counts are polled (every 100 ms here): the create shows once a poll has run after it.
    const configMaps = 1 + SYSTEM_NAMESPACES.length;
    await until('the create counted', async () => sample(await scrape(), 'apiserver_storage_objects', { resource: 'configmaps' }) === configMaps);
    const m = await scrape();
    expect(sample(m, 'apiserver_request_total', request('POST', 'resource', '201'))).toBe(1);
    expect(sample(m, 'apiserver_request_total', request('GET', 'resource', '200'))).toBe(1);
    expect(sample(m, 'apiserver_request_total', request('GET', 'resource', '404'))).toBe(1);
    expect(sample(m, 'apiserver_request_total', request('LIST', 'namespace', '200'))).toBe(1);
    expect(sample(m, 'apiserver_request_total', request('LIST', 'cluster', '200'))).toBe(1);
    expect(sample(m, 'apiserver_request_total', request('LIST', 'cluster', '403'))).toBe(1);
    const { code: _code, ...post } = request('POST', 'resource', '201');
    expect(sample(m, 'apiserver_request_duration_seconds_count', post)).toBe(1);
    expect(sample(m, 'apiserver_request_duration_seconds_bucket', { ...post, le: '+Inf' })).toBe(1);
    // The scrape itself is the one read in flight.
    expect(sample(m, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' })).toBe(1);
    expect(sample(m, 'apiserver_current_inflight_requests', { request_kind: 'mutating' })).toBe(0);
    // The test's own and each namespace's kube-root-ca.crt.
    expect(sample(m, 'apiserver_storage_objects', { resource: 'configmaps' })).toBe(configMaps);
    expect(sample(m, 'apiserver_storage_objects', { resource: 'certificatesigningrequests.certificates.k8s.io' })).toBe(0);
    expect(sample(m, 'apiserver_storage_db_total_size_in_bytes', { endpoint: `${server.dataDir}/store.db` })).toBeGreaterThan(0);
    expect(sample(m, 'authentication_attempts', { result: 'success' })).toBeGreaterThanOrEqual(7);
    expect(sample(m, 'authentication_attempts', { result: 'error' })).toBe(1);
    // The admin is kubeadm's kubernetes-admin (a client certificate), which upstream's short list of
    // usernames does not name: it counts under 'other' with alice.
    expect(sample(m, 'authenticated_user_requests', { username: 'admin' })).toBeUndefined();
    expect(sample(m, 'authenticated_user_requests', { username: 'other' })).toBeGreaterThanOrEqual(7);
    expect(sample(m, 'apiserver_authorization_decisions_total', { decision: 'denied' })).toBe(1);
    expect(sample(m, 'apiserver_authorization_decisions_total', { decision: 'allowed' })).toBeGreaterThanOrEqual(6);
    expect(m.has('process_resident_memory_bytes')).toBe(true);
  });

  it('gauges registered watchers and counts a watch by verb WATCH when it ends', async () => {
    const labels = { group: '', version: 'v1', kind: 'ConfigMap' };
    const before = sample(await scrape(), 'apiserver_registered_watchers', labels) ?? 0;
    const watch = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30');
    await watch.waitFor(1);
    const during = await scrape();
    expect(sample(during, 'apiserver_registered_watchers', labels)).toBe(before + 1);
    // A watch is long-running: not in flight, and not in the latency histogram.
    expect(sample(during, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' })).toBe(1);
    watch.close();
    await watch.ended;
    let after = await scrape();
    for (let i = 0; i < 50 && sample(after, 'apiserver_request_total', request('WATCH', 'namespace', '200')) === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await scrape();
    }
    expect(sample(after, 'apiserver_registered_watchers', labels)).toBe(before);
    expect(sample(after, 'apiserver_request_total', request('WATCH', 'namespace', '200'))).toBe(1);
    const { code: _code, ...watchLabels } = request('WATCH', 'namespace', '200');
    expect(sample(after, 'apiserver_request_duration_seconds_count', watchLabels)).toBeUndefined();
  });

  it('is served only to callers allowed to get the non-resource URL /metrics', async () => {
    const res = await raw(server, 'GET', '/metrics', { token: 'alice-token' });
    expect(res.status).toBe(403);
    expect(res.json.message).toBe('forbidden: User "alice" cannot get path "/metrics"');
    expect((await raw(server, 'GET', '/metrics', { anonymous: true })).status).toBe(401);
  });

  it('answers kubectl get --raw /metrics', async () => {
    const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', server.kubeconfigPath, 'get', '--raw', '/metrics']);
    expect(stdout).toMatch(/^apiserver_request_total\{.*verb="LIST".*\} \d+$/m);
  });
});

describe('storage metrics polled in the background (--etcd-count-metric-poll-period, --etcd-db-metric-poll-interval)', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  const start = async (countMetricPollPeriodMs: number, dbMetricPollIntervalMs = countMetricPollPeriodMs): Promise<TestServer> => {
    const s = await startTestServer({ storage: 'sqlite', countMetricPollPeriodMs, dbMetricPollIntervalMs });
    servers.push(s);
    return s;
  };
  const scrapeOf = async (s: TestServer): Promise<Map<string, number>> => {
    const res = await raw(s, 'GET', '/metrics');
    expect(res.status).toBe(200);
    return samples(res.text);
  };
  const configMaps = (m: Map<string, number>): number | undefined => sample(m, 'apiserver_storage_objects', { resource: 'configmaps' });
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

  it('serves the last poll: a scrape asks the store nothing, and 0 objects read 0', async () => {
    const s = await start(3_600_000);
    // The first poll runs at start; later ones an hour apart.
    await until('the first poll', async () => configMaps(await scrapeOf(s)) === SYSTEM_NAMESPACES.length);
    const count = jest.spyOn(s.store, 'count');
    const sizeBytes = jest.spyOn(s.store as Required<Store>, 'sizeBytes');
    // (The first poll's last counts may still be under way.)
    await new Promise((resolve) => setTimeout(resolve, 200));
    count.mockClear();
    sizeBytes.mockClear();
    expect((await raw(s, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('late') })).status).toBe(201);
    for (let i = 0; i < 3; i++) {
      const m = await scrapeOf(s);
      expect(configMaps(m)).toBe(SYSTEM_NAMESPACES.length);
      expect(sample(m, 'apiserver_storage_objects', { resource: 'certificatesigningrequests.certificates.k8s.io' })).toBe(0);
      expect(sample(m, 'apiserver_storage_db_total_size_in_bytes', { endpoint: `${s.dataDir}/store.db` })).toBeGreaterThan(0);
    }
    expect([count.mock.calls.length, sizeBytes.mock.calls.length]).toEqual([0, 0]);
  });

  it('follows a create within a period, reports a failing count as -1 without failing the scrape, and recovers', async () => {
    const s = await start(100);
    await until('the first poll', async () => configMaps(await scrapeOf(s)) === SYSTEM_NAMESPACES.length);
    expect((await raw(s, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('followed') })).status).toBe(201);
    await until('the create counted', async () => configMaps(await scrapeOf(s)) === SYSTEM_NAMESPACES.length + 1);
    // The store fails every count (as etcd does when it is down): -1, as kube-apiserver reports it.
    const count = jest.spyOn(s.store, 'count').mockRejectedValue(new Error('store unavailable'));
    await until('the failure reported', async () => configMaps(await scrapeOf(s)) === -1);
    count.mockRestore();
    await until('the count back', async () => configMaps(await scrapeOf(s)) === SYSTEM_NAMESPACES.length + 1);
  });

  it('collects neither metric with a period of 0', async () => {
    const s = await start(0);
    const count = jest.spyOn(s.store, 'count');
    const sizeBytes = jest.spyOn(s.store as Required<Store>, 'sizeBytes');
    expect((await raw(s, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('uncounted') })).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const names = [...(await scrapeOf(s)).keys()];
    expect(names.filter((n) => n.startsWith('apiserver_storage_objects') || n.startsWith('apiserver_storage_db_total_size_in_bytes'))).toEqual([]);
    expect([count.mock.calls.length, sizeBytes.mock.calls.length]).toEqual([0, 0]);
  });
});
