/**
 * The replica's own etcd watch stream, against three real etcd members with a tap between the
 * stream and gRPC: responses etcd should never send (an unknown watch id carrying an event, a
 * cancel for a watch never made), a stream reset, and a compaction while the watches are resuming.
 * Through all of it the replica keeps serving: reads, writes, /readyz, the RBAC it reads from its
 * own watches, and clients' watches, which either carry on without a gap or a duplicate or end
 * with 410 Expired.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WatchRequest, WatchResponse } from '../../src/apiserver/storage/etcd/watch-proto.js';
import { EtcdStore } from '../../src/apiserver/storage/etcd/etcd.js';
import { h2WatchTransport, type WatchCall, type WatchTransport } from '../../src/apiserver/storage/etcd/watch-transport.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { openWatch, raw, type WatchStream } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { describeWithTools } from '../helpers/tools.js';
import { until } from '../helpers/wait.js';

const CM = '/api/v1/namespaces/default/configmaps';

/** A real Watch call whose responses the test can add to, and which it can break. */
class TapCall extends EventEmitter implements WatchCall {
  readonly sent: WatchRequest[] = [];
  constructor(private readonly inner: WatchCall) {
    super();
    inner.on('data', (res) => this.emit('data', res));
    inner.on('error', (err) => this.emit('error', err));
    inner.on('end', () => this.emit('end'));
  }
  write(req: WatchRequest): void {
    this.sent.push(req);
    this.inner.write(req);
  }
  cancel(): void {
    this.inner.cancel();
  }
  inject(res: Partial<WatchResponse>): void {
    this.emit('data', { header: { revision: 1 }, watch_id: '0', created: false, canceled: false, compact_revision: 0, cancel_reason: '', fragment: false, events: [], ...res });
  }
  /** The connection drops: the stream sees an error, etcd sees the call cancelled. */
  reset(): void {
    this.emit('error', new Error('14 UNAVAILABLE: injected reset'));
    this.inner.cancel();
  }
}

class Tap implements WatchTransport {
  readonly opened: { call: TapCall; endpoint: string }[] = [];
  held = false;
  constructor(private readonly inner: WatchTransport) {}
  open(): { call: WatchCall; endpoint: string } {
    if (this.held) throw new Error('14 UNAVAILABLE: injected partition');
    const { call, endpoint } = this.inner.open();
    const tapped = { call: new TapCall(call), endpoint };
    this.opened.push(tapped);
    return tapped;
  }
  close(): void {
    this.inner.close();
  }
  get current(): TapCall {
    return this.opened[this.opened.length - 1]!.call;
  }
}

const names = (events: { type: string; object: { metadata: { name: string } } }[]): string[] => events.map((e) => `${e.type} ${e.object.metadata.name}`);

describeWithTools(['etcd'])("a replica's etcd watch stream under injected faults", () => {
  let etcd: EtcdCluster;
  let dataDir: string;
  let tap: Tap;
  let store: EtcdStore;
  let server: TestServer;
  const watches: WatchStream[] = [];

  const watchFromNow = async (): Promise<WatchStream> => {
    const list = await raw(server, 'GET', CM);
    const watch = await openWatch(server, `${CM}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    watches.push(watch);
    return watch;
  };
  const create = async (name: string): Promise<number> => {
    const res = await raw(server, 'POST', CM, { body: { metadata: { name } } });
    expect([name, res.status]).toEqual([name, 201]);
    return Number(res.json.metadata.resourceVersion);
  };
  const stillServes = async (): Promise<void> => {
    expect((await raw(server, 'GET', '/readyz', { anonymous: true })).status).toBe(200);
    expect((await raw(server, 'GET', `${CM}/kube-root-ca.crt`)).status).toBe(200);
    // Authorization reads RBAC objects the replica keeps through its own watches.
    expect((await raw(server, 'GET', CM, { token: 'nobody-token' })).status).toBe(403);
  };

  beforeAll(async () => {
    etcd = await startEtcd({ members: 3 });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'watch-stream-'));
    store = await EtcdStore.open({ endpoints: etcd.endpoints, watchTransport: (opts) => (tap = new Tap(h2WatchTransport(opts))) });
    server = await startTestServer({ dataDir, store, tokenFile: 'nobody-token,nobody,nobody-uid,\n' });
  }, 60_000);
  afterAll(async () => {
    for (const w of watches) w.close();
    await server?.close();
    await etcd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('uses one Watch call for every watch of the replica', async () => {
    await watchFromNow();
    await watchFromNow();
    await create('one-stream');
    expect(tap.opened).toHaveLength(1);
    expect(tap.current.sent.filter((r) => r.create_request).length).toBeGreaterThanOrEqual(3);
  });

  it('delivers events whose response spans many HTTP/2 frames, and several responses in one read, whole and in order', async () => {
    const watch = await watchFromNow();
    // 200 KB values (twelve 16 KB frames each, with their previous values), then small ones in a burst.
    const big = 'x'.repeat(200_000);
    const created = await raw(server, 'POST', CM, { body: { metadata: { name: 'big' }, data: { v: big } } });
    expect(created.status).toBe(201);
    const updated = await raw(server, 'PUT', `${CM}/big`, { body: { ...created.json, data: { v: `${big}y` } } });
    expect(updated.status).toBe(200);
    await Promise.all(Array.from({ length: 20 }, (_, i) => create(`burst-${i}`)));
    const events = await watch.waitFor(22);
    expect(events.slice(0, 2).map((e: { type: string; object: { data: { v: string } } }) => [e.type, e.object.data.v.length])).toEqual([
      ['ADDED', 200_000],
      ['MODIFIED', 200_001],
    ]);
    const rvs = events.map((e: { object: { metadata: { resourceVersion: string } } }) => Number(e.object.metadata.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
    expect(new Set(events.slice(2).map((e: { object: { metadata: { name: string } } }) => e.object.metadata.name)).size).toBe(20);
  });

  it('ignores an event for an unknown watch id (cancelling that id) and a cancel for a watch it never made', async () => {
    const watch = await watchFromNow();
    const ghost = { metadata: { name: 'ghost', namespace: 'default' } };
    const kv = { key: Buffer.from('/registry/configmaps/default/ghost'), value: Buffer.from(JSON.stringify(ghost)), create_revision: 999999, mod_revision: 999999, version: 1 };
    tap.current.inject({ watch_id: '4242', events: [{ type: 'Put', kv, prev_kv: undefined } as never] });
    tap.current.inject({ watch_id: '4343', canceled: true, cancel_reason: 'injected' });
    expect(tap.current.sent.filter((r) => r.cancel_request).map((r) => String(r.cancel_request!.watch_id))).toContain('4242');
    await create('after-ghost');
    expect(names(await watch.waitFor(1))).toEqual(['ADDED after-ghost']);
    await stillServes();
    expect(names(watch.events)).toEqual(['ADDED after-ghost']);
  });

  it('resumes every watch on another member after a stream reset, with no event lost or repeated', async () => {
    const watch = await watchFromNow();
    const before = await create('before-reset');
    await watch.waitFor(1);
    const first = tap.opened.length;
    tap.current.reset();
    const during = await create('during-reset');
    await until('a new stream', () => tap.opened.length > first);
    expect(tap.opened[tap.opened.length - 1]!.endpoint).not.toBe(tap.opened[first - 1]!.endpoint);
    const after = await create('after-reset');
    const events = await watch.waitFor(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(names(watch.events)).toEqual(['ADDED before-reset', 'ADDED during-reset', 'ADDED after-reset']);
    expect(events.map((e: { object: { metadata: { resourceVersion: string } } }) => Number(e.object.metadata.resourceVersion))).toEqual([before, during, after]);
    await stillServes();
  });

  it('ends a watch whose history was compacted while it resumed with 410, and serves new watches', async () => {
    const stale = await watchFromNow();
    tap.held = true;
    tap.current.reset();
    await create('while-held-1');
    const rv = await create('while-held-2');
    await store.compact(rv);
    tap.held = false;
    await stale.ended;
    const last = stale.events[stale.events.length - 1];
    expect([last?.type, last?.object.kind, last?.object.code, last?.object.reason]).toEqual(['ERROR', 'Status', 410, 'Expired']);
    expect(stale.events.slice(0, -1).every((e: { type: string }) => e.type === 'ADDED')).toBe(true);

    // The replica's own watches (RBAC among them) relisted; new client watches work from here.
    const fresh = await watchFromNow();
    await create('after-compaction');
    expect(names(await fresh.waitFor(1))).toEqual(['ADDED after-compaction']);
    await until('the replica serving', async () => (await raw(server, 'GET', '/readyz', { anonymous: true })).status === 200);
    await stillServes();
  }, 30_000);
});
