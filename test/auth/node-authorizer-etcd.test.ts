/**
 * The Node authorizer's graph on etcd, with two API server replicas: a pod bound through one replica
 * gives its node its Secret through the other at once, though that replica's graph hears of the pod
 * a watch round trip later (the deny is confirmed against etcd), and a pod deleted through one replica
 * stops giving it through the other once the delete's watch event arrived, as with upstream's
 * informer-fed graph. Here the watch is usually as quick as the request, so the confirmation is pinned
 * down deterministically in src/apiserver/authorization/node/node-graph.test.ts (a graph on a store that
 * never hears of the pod); this suite checks the whole on real etcd.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EtcdStore } from '../../src/apiserver/storage/etcd/etcd.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { describeWithTools } from '../helpers/tools.js';

const NS = '/api/v1/namespaces/default';
const TOKENS = 'node-a-token,system:node:node-a,uid-a,"system:nodes,system:authenticated"\n';

describeWithTools(['etcd'])('Node authorizer graph on two etcd replicas', () => {
  let etcd: EtcdCluster;
  let dataDir: string;
  const replicas: TestServer[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'node-graph-etcd-'));
    for (let i = 0; i < 2; i++) replicas.push(await startTestServer({ dataDir, store: await EtcdStore.open({ endpoints: etcd.endpoints }), tokenFile: TOKENS }));
  }, 60_000);
  afterAll(async () => {
    for (const r of replicas) await r.close();
    await etcd?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("gives a node a pod's Secret through either replica from the moment the pod is bound, and takes it back after the delete", async () => {
    const [a, b] = replicas as [TestServer, TestServer];
    const nodeGet = (r: TestServer, name: string): Promise<number> => raw(r, 'GET', `${NS}/secrets/${name}`, { token: 'node-a-token' }).then((res) => res.status);
    for (let i = 0; i < 5; i++) {
      expect((await raw(a, 'POST', `${NS}/secrets`, { body: { metadata: { name: `s${i}` }, stringData: { k: 'v' } } })).status).toBe(201);
      const pod = { metadata: { name: `p${i}` }, spec: { nodeName: 'node-a', volumes: [{ name: 's', secret: { secretName: `s${i}` } }], containers: [{ name: 'c', image: 'x' }] } };
      expect((await raw(a, 'POST', `${NS}/pods`, { body: pod })).status).toBe(201);
      // Through the other replica with no wait: its graph may not hold the pod yet, etcd does.
      expect([i, await nodeGet(b, `s${i}`), await nodeGet(a, `s${i}`)]).toEqual([i, 200, 200]);
      expect(await nodeGet(b, `other-${i}`)).toBe(403);
    }
    expect((await raw(a, 'DELETE', `${NS}/pods/p0`)).status).toBe(200);
    const deadline = Date.now() + 15_000;
    while ((await nodeGet(b, 's0')) !== 403) {
      if (Date.now() > deadline) throw new Error('the delete never reached the other replica');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await nodeGet(a, 's0')).toBe(403);
  });
});
