/** The assembled server's start-up options: in-memory storage and a kubeconfig written elsewhere. */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedServer } from '../../src/apiserver/embedded.js';
import { silentLogger } from '../../src/log/logger.js';

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
