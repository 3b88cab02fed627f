/** The assembled server's start-up options: in-memory storage and a kubeconfig written elsewhere. */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import { connect as netConnect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { trackHandles } from '../helpers/handles.js';
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

const run = promisify(execFile);

it('writes the admin kubeconfig to --kubeconfig-out and serves kubectl from memory storage', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-embedded-'));
  const out = path.join(dir, 'nested', 'admin.kubeconfig');
  const server = await startEmbeddedServer({ dataDir: path.join(dir, 'data'), storage: 'memory', logger: silentLogger(), kubeconfigOut: out });
  try {
    expect(server.kubeconfigPath).toBe(out);
    expect(existsSync(path.join(dir, 'data', 'kubeconfig'))).toBe(false);
    expect(existsSync(path.join(dir, 'data', 'store.db'))).toBe(false);
    const { stdout } = await run('kubectl', ['--kubeconfig', server.kubeconfigPath, 'get', 'namespaces', '-o', 'name']);
    expect(stdout.split('\n').filter(Boolean).sort()).toEqual(['namespace/default', 'namespace/kube-node-lease', 'namespace/kube-public', 'namespace/kube-system']);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('leaves no socket, timer or thread of its own once closed, with a watch and kept-alive connections open', async () => {
  const handles = trackHandles();
  try {
    const server = await startTestServer({ storage: 'sqlite', bookmarkIntervalMs: 100 });
    const watch = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true');
    expect((await raw(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'a' } } })).status).toBe(201);
    await watch.waitFor(1);
    await server.close();
    await watch.ended;
    // Within jest's grace before it kills a worker that does not exit.
    expect(await handles.settle(500)).toEqual([]);
  } finally {
    handles.stop();
  }
});

it('refuses new connections once it stops accepting, and serves the open ones until closed', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-embedded-'));
  const server = await startEmbeddedServer({ dataDir: path.join(dir, 'data'), storage: 'memory', logger: silentLogger() });
  const { adminCertPem: cert, adminKeyPem: key, caPem: ca } = server.credentials;
  const session = http2.connect(server.url, { ca, cert, key });
  const get = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':path': '/api' });
      stream.once('response', (headers) => resolve(Number(headers[':status'])));
      stream.once('error', reject);
      stream.resume();
    });
  try {
    expect(await get()).toBe(200);
    server.stopAccepting();
    const refused = await new Promise<string | undefined>((resolve) => {
      const socket = netConnect({ host: '127.0.0.1', port: server.port }, () => resolve(undefined));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
      socket.once('connect', () => socket.destroy());
    });
    expect(refused).toBe('ECONNREFUSED');
    expect(await get()).toBe(200);
  } finally {
    session.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
