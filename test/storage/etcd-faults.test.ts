/**
 * Failures with the API server on etcd, and nothing acknowledged lost: an API server replica
 * killed with -9 during writes (the other replica's clients see every acknowledged write), the
 * etcd leader of three members killed during writes (writes resume after the election, every
 * acknowledged write is there, resourceVersions never go back, and a watch carries on), and etcd
 * stopped entirely (503 with a Status, /readyz failing, no crash, recovery on its own).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EtcdStore } from '../../src/apiserver/storage/etcd/etcd.js';
import { StoreError } from '../../src/apiserver/storage/store.js';
import { kill9, startApiserverChild } from '../helpers/cli.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { openWatch, raw, type RawTarget, type WatchStream } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { describeWithTools } from '../helpers/tools.js';
import { until } from '../helpers/wait.js';

const CM = '/api/v1/namespaces/default/configmaps';

interface Ack {
  name: string;
  rv: number;
}

/** Creates ConfigMaps `<prefix>-<i>` one after another; a failed one is retried (its name may exist by then). */
async function writeUntil(target: RawTarget, prefix: string, done: () => boolean, acks: Ack[], failures: number[]): Promise<void> {
  for (let i = 0; !done(); i++) {
    for (;;) {
      const name = `${prefix}-${i}`;
      const res = await raw(target, 'POST', CM, { body: { metadata: { name } } }).catch(() => undefined);
      if (res?.status === 201) {
        acks.push({ name, rv: Number(res.json.metadata.resourceVersion) });
        break;
      }
      // An answer lost with the connection may have been applied: the retry then finds it existing.
      if (res?.status === 409) break;
      failures.push(res?.status ?? 0);
      if (done()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function listedNames(target: RawTarget): Promise<{ names: Set<string>; rv: number }> {
  const list = await raw(target, 'GET', CM);
  expect(list.status).toBe(200);
  return { names: new Set(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)), rv: Number(list.json.metadata.resourceVersion) };
}

describeWithTools(['etcd'])('API server on etcd under failures', () => {
  let etcd: EtcdCluster | undefined;
  let dataDir: string;
  const servers: TestServer[] = [];
  const children: ChildProcess[] = [];
  const watches: WatchStream[] = [];
  const watchOn = async (target: RawTarget, rv: number): Promise<WatchStream> => {
    const watch = await openWatch(target, `${CM}?watch=1&resourceVersion=${rv}`);
    watches.push(watch);
    return watch;
  };

  const inProcess = async (endpoints: string[]): Promise<TestServer> => {
    const server = await startTestServer({ dataDir, store: await EtcdStore.open({ endpoints, requestTimeoutMs: 3000 }) });
    servers.push(server);
    return server;
  };

  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'etcd-faults-'));
  });
  afterEach(async () => {
    for (const w of watches.splice(0)) w.close();
    for (const c of children.splice(0)) await kill9(c);
    for (const s of servers.splice(0)) await s.close();
    await etcd?.stop();
    etcd = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses no acknowledged write when one replica is killed with -9 during writes', async () => {
    etcd = await startEtcd();
    const a = await startApiserverChild(dataDir, ['--storage', 'etcd', '--etcd-servers', etcd.endpoints.join(',')]);
    children.push(a.child);
    const b = await inProcess(etcd.endpoints);
    const start = await listedNames(b);
    const watch = await watchOn(b, start.rv);

    const acks: Ack[] = [];
    let killed = false;
    const writers = [0, 1, 2, 3].map((w) => writeUntil(a.target, `a${w}`, () => killed, acks, []));
    await until('acknowledged writes', () => acks.length >= 40);
    await kill9(a.child);
    killed = true;
    await Promise.all(writers);

    const after = await listedNames(b);
    const missing = acks.filter((ack) => !after.names.has(ack.name));
    expect(missing).toEqual([]);
    const events = await watch.waitFor(acks.length);
    const seen = new Map(events.map((e: { object: { metadata: { name: string; resourceVersion: string } } }) => [e.object.metadata.name, Number(e.object.metadata.resourceVersion)]));
    for (const ack of acks) expect([ack.name, seen.get(ack.name)]).toEqual([ack.name, ack.rv]);
  }, 120_000);

  it('resumes writes after the etcd leader of three members is killed, with every acknowledged write kept', async () => {
    etcd = await startEtcd({ members: 3 });
    const server = await inProcess(etcd.endpoints);
    const start = await listedNames(server);
    const watch = await watchOn(server, start.rv);

    const acks: Ack[] = [];
    const failures: number[] = [];
    let target = Infinity;
    const writers = [0, 1].map((w) => writeUntil(server, `w${w}`, () => acks.length >= target, acks, failures));
    await until('writes before the kill', () => acks.length >= 20);
    const leader = await etcd.leader();
    await leader.kill();
    const atKill = acks.length;
    target = atKill + 40;
    await Promise.all(writers);
    expect(acks.length - atKill).toBeGreaterThanOrEqual(40);
    // Only "try again" answers while the cluster elected a new leader, never a 500.
    expect(failures.filter((code) => code !== 503 && code !== 504)).toEqual([]);

    // Acknowledgements of one writer come in order: their resourceVersions only go up.
    for (const w of ['w0', 'w1']) {
      const rvs = acks.filter((a) => a.name.startsWith(`${w}-`)).map((a) => a.rv);
      expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
    }
    const after = await listedNames(server);
    expect(acks.filter((ack) => !after.names.has(ack.name))).toEqual([]);
    expect(after.rv).toBeGreaterThanOrEqual(Math.max(...acks.map((a) => a.rv)));

    // The watch moved to a live member and delivered everything once, in order.
    const events = await watch.waitFor(acks.length);
    const rvs = events.map((e: { object: { metadata: { resourceVersion: string } } }) => Number(e.object.metadata.resourceVersion));
    expect(rvs).toEqual([...new Set(rvs)].sort((x, y) => x - y));
    const seen = new Set(events.map((e: { object: { metadata: { name: string } } }) => e.object.metadata.name));
    expect(acks.filter((ack) => !seen.has(ack.name))).toEqual([]);
  }, 60_000);

  it('answers 503 with a Status and fails /readyz while etcd is down, then recovers by itself', async () => {
    etcd = await startEtcd();
    const server = await inProcess(etcd.endpoints);
    expect((await raw(server, 'POST', CM, { body: { metadata: { name: 'before' } } })).status).toBe(201);
    const start = await listedNames(server);
    const watch = await watchOn(server, start.rv);
    const member = etcd.members[0]!;
    await member.kill();

    for (const [method, body] of [['GET', undefined], ['POST', { metadata: { name: 'during' } }]] as const) {
      const res = await raw(server, method, CM, { body });
      expect([method, res.status, res.json.kind, res.json.reason]).toEqual([method, 503, 'Status', 'ServiceUnavailable']);
      expect(res.json.message).toMatch(/^storage is unavailable: etcd is unavailable: /);
      expect(res.headers['retry-after']).toBe('1');
    }
    const ready = await raw(server, 'GET', '/readyz', { anonymous: true });
    expect([ready.status, ready.text]).toEqual([500, '[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n']);
    expect((await raw(server, 'GET', '/livez', { anonymous: true })).status).toBe(200);

    await member.start();
    await until('etcd back', async () => (await raw(server, 'GET', '/readyz', { anonymous: true })).status === 200);
    await until('writes back', async () => (await raw(server, 'POST', CM, { body: { metadata: { name: 'after' } } })).status === 201);
    const events = await watch.waitFor(1, 15_000);
    expect(events.map((e: { type: string; object: { metadata: { name: string } } }) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'after']]);
  }, 60_000);
  it('answers 504 Timeout for a write whose outcome etcd never confirmed, 503 for one it never received', async () => {
    etcd = await startEtcd();
    const server = await inProcess(etcd.endpoints);
    const member = etcd.members[0]!;
    const post = (name: string) => raw(server, 'POST', CM, { body: { metadata: { name } } });
    expect((await post('warm')).status).toBe(201);

    // Sent, and the member stops answering: the deadline passes with the outcome unknown.
    const patient = await EtcdStore.open({ endpoints: etcd.endpoints, requestTimeoutMs: 30_000 });
    member.pause(true);
    const inFlight = patient.create('/registry/core/configmaps/default/cut', { metadata: { name: 'cut' } }).catch((err: unknown) => err);
    const stalled = await post('stalled');
    expect([stalled.status, stalled.json.kind, stalled.json.reason]).toEqual([504, 'Status', 'Timeout']);
    expect(stalled.json.message).toMatch(/^Timeout: storage did not answer in time: /);

    // Sent, and the connection dies before the answer: unknown too, never "failed".
    await member.kill();
    const cut = await inFlight;
    await patient.close();
    expect([cut instanceof StoreError, (cut as StoreError).code]).toEqual([true, 'Timeout']);

    // Refused before it left (nothing listens): not applied, try again.
    const refused = await post('refused');
    expect([refused.status, refused.json.reason]).toEqual([503, 'ServiceUnavailable']);
    await member.start();
    await until('writes back', async () => (await post('after')).status === 201);
    expect((await raw(server, 'GET', `${CM}/refused`)).status).toBe(404);
  }, 60_000);

  it("reports every failure of the store's etcd calls as a StoreError, never as an uncaught exception", async () => {
    etcd = await startEtcd({ members: 3 });
    const store = await EtcdStore.open({ endpoints: etcd.endpoints, requestTimeoutMs: 2000, ttlSeconds: () => 60 });
    try {
      const created = await store.create('/registry/core/configmaps/default/x', { metadata: { name: 'x' } });
      const calls: [string, () => Promise<unknown>][] = [
        ['get', () => store.get('/registry/core/configmaps/default/x')],
        ['create', () => store.create('/registry/core/configmaps/default/y', { metadata: { name: 'y' } })],
        ['update', () => store.update('/registry/core/configmaps/default/x', { metadata: { name: 'x' } }, created.revision)],
        ['delete', () => store.delete('/registry/core/configmaps/default/x')],
        ['range', () => store.range({ prefix: '/registry/core/configmaps/' })],
        ['compact', () => store.compact(created.revision)],
        ['checkHealth', () => store.checkHealth()],
      ];
      // Killed under the calls, stopped, and gone: each way a connection fails.
      const leader = await etcd.leader();
      const during = calls.map(([name, call]) => call().then(() => [name, 'ok'], (err: unknown) => [name, (err as Error).name]));
      await leader.kill();
      for (const m of etcd.members) m.pause(true);
      const stopped = calls.map(([name, call]) => call().then(() => [name, 'ok'], (err: unknown) => [name, (err as Error).name]));
      for (const m of etcd.members) await m.kill();
      const gone = await Promise.all(calls.map(([name, call]) => call().then(() => [name, 'ok'], (err: unknown) => [name, (err as Error).name])));
      for (const [name, outcome] of [...(await Promise.all(during)), ...(await Promise.all(stopped)), ...gone]) {
        expect([name, outcome]).toEqual([name, expect.stringMatching(/^(ok|StoreError)$/)]);
      }
      expect(gone.map(([, outcome]) => outcome)).toEqual(calls.map(() => 'StoreError'));
      // Sizes come from each member's own Status: with none answering there are none.
      expect(await store.sizeBytes()).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);
  it("counts etcd requests and each member's database as kube-apiserver does, and names the members that do not answer", async () => {
    etcd = await startEtcd({ members: 3 });
    // The sizes are polled (every 30 s by default).
    const a = await startApiserverChild(dataDir, ['--storage', 'etcd', '--etcd-servers', etcd.endpoints.join(','), '--etcd-db-metric-poll-interval', '200ms']);
    children.push(a.child);
    expect((await raw(a.target, 'POST', CM, { body: { metadata: { name: 'metered' } } })).status).toBe(201);
    expect((await raw(a.target, 'GET', `${CM}/metered`)).status).toBe(200);
    const sizes = (text: string): string[] => [...text.matchAll(/^apiserver_storage_db_total_size_in_bytes\{endpoint="([^"]+)"\} [1-9]/gm)].map((m) => m[1]!);
    await until('every member sized', async () => sizes((await raw(a.target, 'GET', '/metrics')).text).length === etcd!.endpoints.length, 10_000);
    const metrics = (await raw(a.target, 'GET', '/metrics')).text;
    for (const operation of ['create', 'get']) {
      expect(metrics).toMatch(new RegExp(`^etcd_request_duration_seconds_count\\{operation="${operation}",type="configmaps"\\} [1-9]`, 'm'));
    }
    expect(metrics).toMatch(/^etcd_request_duration_seconds_bucket\{le="0.005",operation="get",type="configmaps"\} /m);
    expect(metrics).toMatch(/^etcd_requests_total\{operation="list",type="namespaces"\} [1-9]/m);
    expect(sizes(metrics)).toEqual(etcd.endpoints);
    const verbose = await raw(a.target, 'GET', '/readyz?verbose', { anonymous: true });
    expect([verbose.status, verbose.text]).toEqual([200, expect.stringMatching(/^\[\+\]ping ok\n(.*\n)*\[\+\]etcd ok\n(.*\n)*readyz check passed\n$/)]);

    // One member down: still ready, and its database is no longer reported.
    const [m0, m1] = etcd.members;
    await m0!.kill();
    // (If it was the leader, the others elect one first.)
    await until('ready with one member down', async () => (await raw(a.target, 'GET', '/readyz', { anonymous: true })).status === 200, 10_000);
    const live = etcd.endpoints.slice(1).join(' ');
    await until('the live members sized', async () => sizes((await raw(a.target, 'GET', '/metrics')).text).join(' ') === live, 10_000);

    // Quorum lost: /readyz withholds the reason as upstream, /readyz/etcd names who does not answer.
    await m1!.kill();
    const failing = await raw(a.target, 'GET', '/readyz?verbose', { anonymous: true });
    expect([failing.status, failing.text]).toEqual([500, expect.stringContaining('[-]etcd failed: reason withheld\n')]);
    expect(failing.text).toMatch(/readyz check failed\n$/);
    const detail = await raw(a.target, 'GET', '/readyz/etcd');
    expect(detail.status).toBe(500);
    expect(detail.text).toMatch(/^internal server error: .*members not answering: /);
    expect(detail.text).toContain(`${m0!.clientUrl} (`);
    expect(detail.text).toContain(`${m1!.clientUrl} (`);
    expect(detail.text).not.toContain(`${etcd.members[2]!.clientUrl} (`);
  }, 90_000);
});
