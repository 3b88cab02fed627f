/**
 * The store's unary etcd calls (src/apiserver/storage/etcd/grpc-unary.ts) when a member misbehaves at
 * the HTTP/2 level: an API server on a real etcd behind a gRPC proxy this test controls, which forwards
 * every call but can reset a call's stream after etcd applied it, drop the connection, send GOAWAY,
 * or never answer. A write whose answer is lost is 504 (it may have been applied, and here it was); a
 * write the member refused before processing it is 503 and never appears; a call that outlives its
 * deadline is 504; and a member that cannot be reached costs reads nothing and writes at most the
 * circuit breaker's three refusals.
 */
import http2 from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { EtcdStore } from '../../src/apiserver/storage/etcd/etcd.js';
import { storeErrorOf, writeErrorOf } from '../../src/apiserver/storage/etcd/etcd-client.js';
import { EtcdKv } from '../../src/apiserver/storage/etcd/kv-client.js';
import { StoreError, type StoreEvent } from '../../src/apiserver/storage/store.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { describeWithTools } from '../helpers/tools.js';
import { until } from '../helpers/wait.js';

const CM = '/api/v1/namespaces/default/configmaps';
const { NGHTTP2_NO_ERROR, NGHTTP2_INTERNAL_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;

/** What the proxy does with one unary call: forward it (default), or one of the faults. */
type Fault = 'reset-after-etcd' | 'drop-connection-after-etcd' | 'refuse-with-goaway' | 'goaway-then-forward' | 'never-answer' | 'answer-late';

interface GrpcProxy {
  url: string;
  /** Decides each unary call's fate from its method path and request message. */
  fault?: (path: string, message: Buffer) => Fault | undefined;
  /** Connections the store opened to the proxy. */
  connections: number;
  /** grpc-timeout of each call that was never answered, and whether the caller then cancelled it. */
  unanswered: { timeout: string | undefined; cancelled: Promise<void> }[];
  close(): Promise<void>;
}

/** A gRPC proxy to one etcd member on Node's HTTP/2: streams (the Watch) pass through, unary calls can be faulted. */
async function grpcProxy(upstream: string): Promise<GrpcProxy> {
  const etcd = http2.connect(upstream);
  etcd.on('error', () => {});
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createServer();
  const proxy: GrpcProxy = { url: '', connections: 0, unanswered: [], close: async () => {} };
  server.on('session', (s) => {
    proxy.connections++;
    sessions.add(s);
    s.on('error', () => {});
    s.on('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    const grpcPath = String(headers[':path']);
    const forwarded = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== ':authority' && k !== ':scheme'));
    const up = etcd.request(forwarded, { endStream: false });
    up.on('error', () => {});
    const pass = (delayMs = 0): void => {
      up.on('response', (h) => {
        if (stream.destroyed) return;
        if (h['grpc-status'] !== undefined) return stream.respond(h, { endStream: true });
        setTimeout(() => {
          // The faults below reset streams and drop connections: one may already be gone by now.
          if (stream.destroyed) return;
          stream.respond(h, { waitForTrailers: true });
          up.pipe(stream);
        }, delayMs);
      });
      up.on('trailers', (t) => stream.once('wantTrailers', () => stream.sendTrailers(t)));
    };
    if (grpcPath.endsWith('/Watch')) {
      pass();
      stream.pipe(up);
      return;
    }
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      const fault = proxy.fault?.(grpcPath, body.subarray(5));
      if (fault === 'never-answer') {
        up.close();
        proxy.unanswered.push({ timeout: headers['grpc-timeout'] as string | undefined, cancelled: new Promise((resolve) => stream.on('close', () => resolve())) });
        return;
      }
      if (fault === 'refuse-with-goaway') {
        up.close();
        stream.session?.goaway(NGHTTP2_NO_ERROR, stream.id! - 2);
        stream.close(NGHTTP2_REFUSED_STREAM);
        return;
      }
      if (fault === 'reset-after-etcd' || fault === 'drop-connection-after-etcd') {
        up.resume();
        // etcd has answered (and applied the call) when its stream closes: the answer is then lost.
        up.on('close', () => (fault === 'reset-after-etcd' ? stream.close(NGHTTP2_INTERNAL_ERROR) : stream.session?.destroy()));
        up.end(body);
        return;
      }
      if (fault === 'goaway-then-forward') stream.session?.goaway(NGHTTP2_NO_ERROR, stream.id!);
      // etcd's answer held back well after the write's watch event.
      pass(fault === 'answer-late' ? 200 : 0);
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    for (const s of sessions) s.destroy();
    await new Promise((resolve) => server.close(resolve));
    etcd.close();
  };
  return proxy;
}

/** The fault for unary calls whose request names `name` (a ConfigMap's key is in its Txn or Range). */
const forName = (name: string, fault: Fault) => (_path: string, message: Buffer) => (message.includes(`/configmaps/default/${name}`) ? fault : undefined);

describeWithTools(['etcd'])("the store's unary etcd calls when a member misbehaves", () => {
  let etcd: EtcdCluster;
  let dataDir: string;
  const proxies: GrpcProxy[] = [];
  let server: TestServer | undefined;

  const serve = async (endpoints: string[], requestTimeoutMs = 5000): Promise<TestServer> => {
    server = await startTestServer({ dataDir, store: await EtcdStore.open({ endpoints, requestTimeoutMs }) });
    return server;
  };
  const proxy = async (): Promise<GrpcProxy> => {
    const p = await grpcProxy(etcd.endpoints[0]!);
    proxies.push(p);
    return p;
  };
  const post = (name: string) => raw(server!, 'POST', CM, { body: { metadata: { name } } });
  const get = (name: string) => raw(server!, 'GET', `${CM}/${name}`);

  beforeAll(async () => {
    etcd = await startEtcd();
  });
  afterAll(async () => {
    await etcd.stop();
  });
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'etcd-member-faults-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const p of proxies.splice(0)) await p.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 504 with a Status for a write whose answer the member lost (reset stream or dropped connection), and the write is there', async () => {
    const p = await proxy();
    await serve([p.url]);
    p.fault = forName('reset', 'reset-after-etcd');
    const reset = await post('reset');
    expect([reset.status, reset.json.kind, reset.json.reason]).toEqual([504, 'Status', 'Timeout']);
    p.fault = forName('dropped', 'drop-connection-after-etcd');
    const dropped = await post('dropped');
    expect([dropped.status, dropped.json.kind, dropped.json.reason]).toEqual([504, 'Status', 'Timeout']);
    expect(dropped.json.message).toMatch(/may or may not have been applied/);

    p.fault = undefined;
    expect((await get('reset')).status).toBe(200);
    expect((await get('dropped')).status).toBe(200);
    // A read that lost its answer is simply read again.
    const before = p.connections;
    // Only the GET's own read is faulted, once: background calls (counts, leases) pass untouched.
    let faults = 0;
    const dropRead = forName('dropped', 'drop-connection-after-etcd');
    p.fault = (grpcPath, message) => (grpcPath.endsWith('/Range') && dropRead(grpcPath, message) && faults++ === 0 ? 'drop-connection-after-etcd' : undefined);
    expect((await get('dropped')).status).toBe(200);
    expect(faults).toBeGreaterThan(1);
    expect(p.connections).toBeGreaterThan(before);
  });

  it('answers 503 for a write the member refused with GOAWAY before processing it, which never appears; calls go on over a new connection', async () => {
    const p = await proxy();
    await serve([p.url]);
    expect((await post('first')).status).toBe(201);
    const connections = p.connections;

    p.fault = forName('refused', 'refuse-with-goaway');
    const refused = await post('refused');
    expect([refused.status, refused.json.kind, refused.json.reason]).toEqual([503, 'Status', 'ServiceUnavailable']);
    p.fault = undefined;
    expect((await get('refused')).status).toBe(404);
    expect((await post('after-refusal')).status).toBe(201);
    expect(p.connections).toBe(connections + 1);

    // A GOAWAY that lets the call through: it completes, and the next call opens a new connection.
    p.fault = forName('drained', 'goaway-then-forward');
    expect((await post('drained')).status).toBe(201);
    p.fault = undefined;
    expect((await post('after-drain')).status).toBe(201);
    expect(p.connections).toBe(connections + 2);
  });

  it('answers 504 for a call etcd does not answer by its deadline, sends the deadline along and cancels the call', async () => {
    const p = await proxy();
    await serve([p.url], 1500);
    p.fault = forName('stalled', 'never-answer');
    const started = Date.now();
    const write = await post('stalled');
    expect([write.status, write.json.kind, write.json.reason]).toEqual([504, 'Status', 'Timeout']);
    expect(write.json.message).toMatch(/^Timeout: storage did not answer in time: /);
    const read = await get('stalled');
    expect([read.status, read.json.reason]).toEqual([504, 'Timeout']);
    expect(Date.now() - started).toBeLessThan(10_000);

    expect(p.unanswered).toHaveLength(2);
    for (const call of p.unanswered) {
      expect(Number(/^(\d+)m$/.exec(call.timeout ?? '')?.[1])).toBeLessThanOrEqual(1500);
      await call.cancelled;
    }
    p.fault = undefined;
    expect((await post('after')).status).toBe(201);
  });

  it('answers 503 for a write whose deadline passed before a connection was set up: it was never sent', async () => {
    // A member that accepts TCP connections and never answers the TLS handshake.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const kv = new EtcdKv({ endpoints: [`https://127.0.0.1:${(silent.address() as AddressInfo).port}`], requestTimeoutMs: 500 });
    try {
      const key = Buffer.from('/registry/configmaps/default/never-sent');
      const err = await kv.txn({ compare: [], success: [{ request_put: { key, value: Buffer.from('{}') } }], failure: [] }).catch((e: unknown) => e);
      expect(sockets).toHaveLength(1);
      const mapped = writeErrorOf(err, 'configmaps/default/never-sent');
      expect([mapped instanceof StoreError, (mapped as StoreError).code]).toEqual([true, 'Unavailable']);
      // A read out of time is a Timeout, whatever kept it.
      const read = storeErrorOf(await kv.range({ key }).catch((e: unknown) => e), 'configmaps/default/never-sent');
      expect((read as StoreError).code).toBe('Timeout');
    } finally {
      kv.close();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it("takes a write's object from its watch event when the event arrives before etcd's answer: one decode, one object", async () => {
    const p = await proxy();
    const store = await EtcdStore.open({ endpoints: [p.url] });
    try {
      const key = '/registry/core/configmaps/default/late';
      const events: StoreEvent[] = [];
      store.watch('/registry/core/configmaps/', { fromRevision: store.currentRevision(), onEvent: (e) => events.push(e) });
      p.fault = forName('late', 'answer-late');
      const created = store.create(key, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', namespace: 'default' } });
      let answered = false;
      void created.then(() => (answered = true));
      await until('the watch event', () => events.length === 1);
      expect(answered).toBe(false);
      expect((await created).object).toBe(events[0]!.object);
      const updated = await store.update(key, { ...events[0]!.object, data: { v: '2' } }, (await created).revision);
      await until('the second watch event', () => events.length === 2);
      expect(updated.object).toBe(events[1]!.object);
      expect(events[1]!.prevObject).toBe(events[0]!.object);
    } finally {
      await store.close();
    }
  });

  it('moves to another member: reads fail over at once, writes after at most three refusals, none of them applied', async () => {
    const live = await proxy();
    const dead = await proxy();
    await dead.close();
    await serve([dead.url, live.url]);

    for (let i = 0; i < 10; i++) expect((await raw(server!, 'GET', CM)).status).toBe(200);
    const refused: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await post(`w${i}`);
      expect([201, 503]).toContain(res.status);
      if (res.status === 503) refused.push(`w${i}`);
    }
    // The dead member's circuit breaker opens after three consecutive refusals.
    expect(refused.length).toBeLessThanOrEqual(3);
    for (const name of refused) expect((await get(name)).status).toBe(404);
  });
});
