/**
 * `up` notices a controller thread that is alive but hung: its event loop spins (a test hook,
 * test/helpers/stall-controller.mjs, makes it), so its heartbeats stop while the API server on the
 * main thread goes on serving. /readyz says so first, then up terminates the thread, logs the stall
 * and ends non-zero, as for a controller that died, so whatever supervises up restarts the pair.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kill9, startUpChild } from '../helpers/cli.js';
import { raw, type RawTarget } from '../helpers/http.js';
import { until } from '../helpers/wait.js';

const HOOK = path.join(process.cwd(), 'test/helpers/stall-controller.mjs');

let dir: string;
let child: ChildProcess | undefined;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-stall-'));
});
afterAll(async () => {
  if (child) await kill9(child);
  rmSync(dir, { recursive: true, force: true });
});

it('a controller thread whose event loop hangs fails /readyz, then up logs the stall and exits non-zero', async () => {
  const dataDir = path.join(dir, 'data');
  const stallFile = path.join(dir, 'stall');
  const up = await startUpChild(['--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0'], {
    nodeArgs: ['--import', HOOK],
    env: { KUBE_IDENTITY_TEST_STALL_FILE: stallFile },
  });
  child = up.child;
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
  const target: RawTarget = {
    url: up.field('API server'),
    caPem: readFileSync(path.join(dataDir, 'ca.crt'), 'utf8'),
    admin: { certPem: readFileSync(path.join(dataDir, 'admin.crt'), 'utf8'), keyPem: readFileSync(path.join(dataDir, 'admin.key'), 'utf8') },
  };
  // A beating controller: its check passes, on its own path and among the others.
  expect(await raw(target, 'GET', '/readyz/controller')).toMatchObject({ status: 200, text: 'ok' });
  expect((await raw(target, 'GET', '/healthz?verbose')).text).toContain('[+]controller ok\n');

  writeFileSync(stallFile, '');
  // The server still answers (it is the other thread), and says the controller is silent.
  let silent = '';
  await until('/readyz/controller to fail', async () => {
    if (child?.exitCode !== null) return true;
    const r = await raw(target, 'GET', '/readyz/controller').catch(() => undefined);
    if (r?.status === 500) silent = r.text;
    return silent !== '';
  }, 30_000);
  expect(silent).toMatch(/^internal server error: controller thread silent for \d+\.\d s/);

  expect(await exited).toBe(1);
  expect(stderr).toMatch(/^kube-identity: controller thread stalled: no heartbeat from its event loop for \d+\.\d s; terminated it$/m);
  const lines = readFileSync(path.join(dataDir, 'kube-identity.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg: string; silentMs?: number; err?: { type?: string } });
  const stalled = lines.find((l) => l.msg === 'controller thread stalled: stopping the API server');
  expect(stalled).toMatchObject({ err: { type: 'ControllerStalledError' } });
  expect(stalled?.silentMs).toBeGreaterThanOrEqual(10_000);
  // Stopped, not undone: the cluster that ran keeps its data.
  expect(readFileSync(path.join(dataDir, 'kubeconfig'), 'utf8')).toContain('server:');
}, 120_000);
