/**
 * The main job as a user runs it: `kube-identity up` in one process, `kube-identity demo` in
 * another (both from the TypeScript sources), and kubectl against the kubeconfig `up` printed.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = process.cwd();
const NODE_ARGS = ['--import', path.join(ROOT, 'test/helpers/register-ts.mjs'), path.join(ROOT, 'src/cmd/main.ts')];
const env = { ...process.env, NODE_OPTIONS: '' };

let up: ChildProcess;
let dataDir: string;
let banner = '';

/** Starts `up` and resolves once it printed its banner. */
function startUp(): Promise<void> {
  up = spawn(process.execPath, [...NODE_ARGS, 'up', '--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`up did not start: ${banner} ${err}`)), 40_000);
    up.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    up.stdout?.on('data', (c: Buffer) => {
      banner += c.toString();
      if (!banner.includes('Press Ctrl-C to stop.')) return;
      clearTimeout(timer);
      resolve();
    });
    up.once('exit', (code) => reject(new Error(`up exited ${code}: ${err}`)));
  });
}

function field(name: string): string {
  const line = banner.split('\n').find((l) => l.trim().startsWith(name));
  if (!line) throw new Error(`banner has no ${name}: ${banner}`);
  return line.trim().slice(name.length).trim();
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-up-'));
  await startUp();
}, 60_000);

afterAll(async () => {
  if (up.exitCode === null) {
    const exited = new Promise((r) => up.once('exit', r));
    up.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

it('prints the kubeconfig, the metrics URL and commands to try, once', () => {
  expect(field('kubeconfig')).toBe(path.join(dataDir, 'kubeconfig'));
  expect(field('metrics')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  expect(banner.match(/kube-identity is up\./g)).toHaveLength(1);
  expect(banner).toContain(`kubectl --kubeconfig ${field('kubeconfig')} get csr`);
});

it('runs the demo: a node joins, its CSR is approved and issued, and it authenticates with the certificate', async () => {
  const kubeconfig = field('kubeconfig');
  const demo = await run(process.execPath, [...NODE_ARGS, 'demo', '--kubeconfig', kubeconfig, '--node', 'e2e-node'], { env, timeout: 60_000 });
  expect(demo.stdout).toContain('issued');
  expect(demo.stdout).toContain('The server says this node is: system:node:e2e-node (groups: system:nodes, system:authenticated)');

  const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'csr', '-o', 'json'], { env });
  const csrs = (JSON.parse(stdout) as { items: { spec: { username: string }; status: { conditions: { type: string; reason: string }[]; certificate?: string } }[] }).items;
  expect(csrs).toHaveLength(1);
  expect(csrs[0]?.spec.username).toMatch(/^system:bootstrap:[a-z0-9]{6}$/);
  expect(csrs[0]?.status.conditions.map((c) => [c.type, c.reason])).toEqual([['Approved', 'AutoApproved']]);
  expect(csrs[0]?.status.certificate).toBeTruthy();

  const metrics = await fetch(field('metrics')).then((r) => r.text());
  expect(metrics).toMatch(/kube_identity_csr_issuances_total\{signer="kubernetes.io\/kube-apiserver-client-kubelet"\} 1/);
}, 90_000);

it('reuses the data directory and its CA on a second start', async () => {
  const caBefore = readFileSync(path.join(dataDir, 'ca.crt'), 'utf8');
  const exited = new Promise((r) => up.once('exit', r));
  up.kill('SIGTERM');
  expect(await exited).toBe(0);
  banner = '';
  await startUp();
  const { stdout } = await run('kubectl', ['--kubeconfig', field('kubeconfig'), 'get', 'csr', '-o', 'name'], { env });
  expect(stdout.trim()).toMatch(/^certificatesigningrequest\.certificates\.k8s\.io\/node-csr-/);
  expect(readFileSync(path.join(dataDir, 'ca.crt'), 'utf8')).toBe(caBefore);
}, 90_000);
