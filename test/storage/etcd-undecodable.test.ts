/**
 * A value in etcd that is not JSON (another tool wrote it) ends every watch that meets it as
 * kube-apiserver's does: one ERROR event carrying a 500 InternalError Status, then the end of the
 * stream; never a line a client cannot parse. That includes a watch without a selector, which gets
 * values relayed as text, for a value whose start looks like ours (its metadata is where we put it).
 */
import { execFile } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { raw, type RawResponse } from '../helpers/http.js';
import { describeWithTools } from '../helpers/tools.js';

const run = promisify(execFile);
const CMS = '/api/v1/namespaces/default/configmaps';

describeWithTools(['etcd', 'etcdctl'])('a watched etcd value that is not JSON', () => {
  let etcd: EtcdCluster;
  let dir: string;
  let server: EmbeddedServer;
  beforeAll(async () => {
    etcd = await startEtcd();
    dir = mkdtempSync(path.join(os.tmpdir(), 'undecodable-'));
    server = await startEmbeddedServer({ dataDir: dir, logger: silentLogger(), port: 0, storage: 'etcd', etcd: { endpoints: etcd.endpoints, prefix: '/undecodable' } });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const api = (method: string, p: string, body?: unknown): Promise<RawResponse> =>
    raw({ url: server.url, caPem: server.credentials.caPem, admin: { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem } }, method, p, { body });
  const etcdctl = (...args: string[]) => run('etcdctl', ['--endpoints', etcd.endpoints.join(','), ...args], { env: { ...process.env, ETCDCTL_API: '3' } });

  /** Every line of a watch's body, read until the server ends it. */
  const watchLines = (query: string): Promise<string[]> =>
    new Promise((resolve, reject) => {
      const req = https.get(
        new URL(`${CMS}?watch=1&timeoutSeconds=20&${query}`, server.url),
        { ca: server.credentials.caPem, cert: server.credentials.adminCertPem, key: server.credentials.adminKeyPem },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve(body.split('\n').filter((l) => l !== '')));
        },
      );
      req.on('error', reject);
    });

  it.each([
    ['whose metadata is where ours is', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad","namespace":"default"},"data":{"a":'],
    ['with nothing of ours', 'not json'],
  ])('ends a watch without a selector and one with a selector with an InternalError event, a value %s', async (_, value) => {
    const good = await api('POST', CMS, { metadata: { generateName: 'good-', labels: { app: 'a' } } });
    expect(good.status).toBe(201);
    const from = String(good.json.metadata.resourceVersion);
    const watches = [watchLines(`resourceVersion=${from}`), watchLines(`resourceVersion=${from}&labelSelector=app%3Da`)];
    const changed = await api('PUT', `${CMS}/${String(good.json.metadata.name)}`, { ...good.json, data: { v: '1' } });
    expect(changed.status).toBe(200);
    await etcdctl('put', '/undecodable/configmaps/default/bad', value);
    for (const lines of await Promise.all(watches)) {
      // Each line parses, the write before the bad value arrived, and the last event says what kube-apiserver says.
      const events = lines.map((l) => JSON.parse(l) as { type: string; object: Record<string, unknown> });
      expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'ERROR']);
      expect(events[1]!.object).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500 });
      expect(String(events[1]!.object.message)).toMatch(/^Internal error occurred: cannot decode a watched value: /);
    }
    // A read of it fails the same way, and the collection is served again once the value is gone.
    const read = await api('GET', `${CMS}/bad`);
    expect([read.status, read.json.reason]).toEqual([500, 'InternalError']);
    await etcdctl('del', '/undecodable/configmaps/default/bad');
    expect((await api('GET', CMS)).status).toBe(200);
    expect((await api('DELETE', `${CMS}/${String(good.json.metadata.name)}`)).status).toBe(200);
  }, 60_000);
});
