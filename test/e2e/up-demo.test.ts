/**
 * The main job as a user runs it: `kube-identity up` in one process, `kube-identity demo` in
 * another (both from the TypeScript sources), and kubectl against the kubeconfig `up` printed.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI as NODE_ARGS, CLI_ENV as env, runCli, startCliChild, startUpChild } from '../helpers/cli.js';
import { until } from '../helpers/wait.js';

const run = promisify(execFile);

let up: ChildProcess;
let dataDir: string;
let banner = '';

/** Starts `up`; `banner` collects what it prints. */
async function startUp(): Promise<void> {
  const started = await startUpChild(['--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0']);
  up = started.child;
  banner += started.output();
  up.stdout?.on('data', (c: Buffer) => (banner += c.toString()));
}

function field(name: string): string {
  const line = banner.split('\n').find((l) => l.trim().startsWith(name));
  if (!line) throw new Error(`banner has no ${name}: ${banner}`);
  return line.trim().slice(name.length).trim();
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-up-'));
  // As a careless umask or an older version would have left it: up must make it private again.
  chmodSync(dataDir, 0o755);
  writeFileSync(path.join(dataDir, 'kube-identity.log'), '', { mode: 0o644 });
  chmodSync(path.join(dataDir, 'kube-identity.log'), 0o644);
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

it('prints the kubeconfig, the metrics URL, the workload signer and commands to try, once', () => {
  expect(field('pod certs')).toBe(`kube-identity.io/workload: SPIFFE IDs spiffe://cluster.local/ns/NAMESPACE/sa/SERVICE_ACCOUNT, CA ${path.join(dataDir, 'workload-ca.crt')} (ClusterTrustBundle per signer)`);
  expect(field('kubeconfig')).toBe(path.join(dataDir, 'kubeconfig'));
  expect(field('metrics')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  expect(banner.match(/kube-identity is up\./g)).toHaveLength(1);
  expect(banner).toContain(`kubectl --kubeconfig ${field('kubeconfig')} get csr`);
});

it("runs the demo as a separate process: a kubelet's whole life, one line per step", async () => {
  const kubeconfig = field('kubeconfig');
  const demo = await run(process.execPath, [...NODE_ARGS, 'demo', '--kubeconfig', kubeconfig, '--node', 'e2e-node'], { env, timeout: 60_000 });
  const lines = demo.stdout.trim().split('\n');
  expect(lines.slice(1).map((l) => /^\s*(\d+)\. ([^:]+):/.exec(l)?.slice(1, 3))).toEqual([
    ['1', 'bootstrap token'],
    ['2', 'client certificate'],
    ['3', 'node registered'],
    ['4', 'lease heartbeats'],
    ['5', 'serving certificate'],
    ['6', 'https listener'],
    ['7', 'client certificate rotated'],
    ['8', 'api called with the new certificate'],
    ['9', 'pods scheduled'],
    ['10', 'pod certificates'],
    ['11', 'trust bundle'],
    ['12', 'mutual tls'],
  ]);
  expect(lines[2]).toMatch(/from system:bootstrap:[a-z0-9]{6}: Auto approving kubelet client certificate after SubjectAccessReview\. Issued\.$/);
  expect(lines[5]).toContain('Auto approving kubelet serving certificate after policy check. Issued.');
  const address = /IP Address:(10\.244\.\d+\.\d+)\)/.exec(lines[6] ?? '')?.[1];
  expect(lines[6]).toMatch(/serves CN=system:node:e2e-node \(DNS:e2e-node, IP Address:10\.244\.\d+\.\d+\), verified against the kubelet-serving CA \(kube-system\/kube-identity-trust-bundle\) as "e2e-node"; the cluster CA \(kube-root-ca\.crt\) refuses it$/);
  expect(lines[7]).toMatch(/from system:node:e2e-node with the old certificate: Auto approving self kubelet client certificate after SubjectAccessReview\. Issued, expires in (59\d|600)s\.$/);
  expect(lines[8]).toContain('the server says this node is system:node:e2e-node (groups: system:nodes, system:authenticated)');
  // The workload steps: each pod's identity is its service account's, from up's workload signer and its own CA.
  expect(lines[9]).toContain('default/e2e-node-frontend (service account frontend) and default/e2e-node-backend (service account backend) bound to e2e-node');
  expect(lines[10]).toMatch(
    /e2e-node-frontend-\w+: Issued spiffe:\/\/cluster\.local\/ns\/default\/sa\/frontend; e2e-node-backend-\w+: Issued spiffe:\/\/cluster\.local\/ns\/default\/sa\/backend \(certificates\.k8s\.io\/v1 PodCertificateRequests with fresh P-256 keys, from system:node:e2e-node;/,
  );
  expect(lines[11]).toContain('ClusterTrustBundle kube-identity.io:workload:kube-identity (spec.signerName=kube-identity.io/workload), read as the node');
  expect(lines[12]).toMatch(
    /backend verified spiffe:\/\/cluster\.local\/ns\/default\/sa\/frontend, frontend verified spiffe:\/\/cluster\.local\/ns\/default\/sa\/backend, each against the ClusterTrustBundle alone; the node's own certificate \(cluster CA\) is refused$/,
  );

  // The kubelet it plays names the tool in client-go's User-Agent form (client-node's own is replaced).
  const audited = (): { user: { username: string }; userAgent?: string }[] =>
    readFileSync(path.join(dataDir, 'audit.log'), 'utf8')
      .split('\n')
      // Whole lines only: up may be writing the last one.
      .filter((l) => l.endsWith('}'))
      .map((l) => JSON.parse(l) as { user: { username: string }; userAgent?: string });
  const nodeEvents = () => audited().filter((e) => e.user.username === 'system:node:e2e-node');
  await until('the node\'s requests in the audit log', () => nodeEvents().length > 0);
  const asNode = nodeEvents();
  for (const e of asNode) expect(e.userAgent).toMatch(/^kube-identity\/v\d+\.\d+\.\d+ \([a-z0-9]+\/[a-z0-9]+\) kubernetes\/([0-9a-f]{7}|unknown)\/demo$/);

  const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { env })).stdout;
  type Csr = { metadata: { name: string }; spec: { username: string; signerName: string; expirationSeconds?: number }; status: { conditions: { type: string; reason: string }[]; certificate?: string } };
  const csrs = (JSON.parse(await kubectl('get', 'csr', '-o', 'json')) as { items: Csr[] }).items;
  expect(csrs.map((c) => [c.spec.signerName, c.spec.username.replace(/^system:bootstrap:.*/, 'system:bootstrap:*'), c.spec.expirationSeconds ?? null]).sort()).toEqual([
    ['kubernetes.io/kube-apiserver-client-kubelet', 'system:bootstrap:*', null],
    ['kubernetes.io/kube-apiserver-client-kubelet', 'system:node:e2e-node', 600],
    ['kubernetes.io/kubelet-serving', 'system:node:e2e-node', null],
  ]);
  for (const c of csrs) {
    expect(c.status.conditions.map((x) => [x.type, x.reason])).toEqual([['Approved', 'AutoApproved']]);
    expect(c.status.certificate).toBeTruthy();
  }
  const node = JSON.parse(await kubectl('get', 'node', 'e2e-node', '-o', 'json')) as { status: { addresses: { address: string }[] } };
  expect(node.status.addresses.map((a) => a.address)).toEqual([address, 'e2e-node']);
  expect(await kubectl('get', 'lease', '-n', 'kube-node-lease', 'e2e-node', '-o', 'jsonpath={.spec.holderIdentity}')).toBe('e2e-node');

  type Pcr = { spec: { signerName: string; podName: string; nodeName: string }; status: { conditions: { type: string }[]; certificateChain?: string } };
  const pcrs = (JSON.parse(await kubectl('get', 'podcertificaterequests', '-n', 'default', '-o', 'json')) as { items: Pcr[] }).items;
  expect(pcrs.map((p) => [p.spec.signerName, p.spec.podName, p.spec.nodeName, p.status.conditions.map((c) => c.type).join()]).sort()).toEqual([
    ['kube-identity.io/workload', 'e2e-node-backend', 'e2e-node', 'Issued'],
    ['kube-identity.io/workload', 'e2e-node-frontend', 'e2e-node', 'Issued'],
  ]);

  const metrics = await fetch(field('metrics')).then((r) => r.text());
  expect(metrics).toMatch(/kube_identity_pcr_issuances_total\{signer="kube-identity.io\/workload"\} 2/);
  expect(metrics).toMatch(/kube_identity_csr_issuances_total\{signer="kubernetes.io\/kube-apiserver-client-kubelet"\} 2/);
  expect(metrics).toMatch(/kube_identity_csr_approvals_total\{signer="kubernetes.io\/kubelet-serving",reason="kubelet-serving-policy"\} 1/);
  expect(metrics).toMatch(/kube_identity_csr_approvals_total\{signer="kubernetes.io\/kube-apiserver-client-kubelet",reason="selfnodeclient"\} 1/);
}, 90_000);

it('runs the demo a second time against the same cluster: the new node gets an address no Node holds', async () => {
  const kubeconfig = field('kubeconfig');
  // e2e-node, from the test above, holds an address already: the second run must pick another.
  const second = await runCli(['demo', '--kubeconfig', kubeconfig]);
  expect([second.code, second.stderr]).toEqual([0, '']);
  expect(second.stdout).toMatch(/^12\. mutual tls: /m);
  const address = /IP Address:(10\.244\.\d+\.\d+)\)/.exec(second.stdout)?.[1];
  const nodes = (JSON.parse((await run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'json'], { env })).stdout) as { items: { metadata: { name: string }; status: { addresses: { type: string; address: string }[] } }[] }).items;
  const held = nodes.flatMap((n) => n.status.addresses.filter((a) => a.type === 'InternalIP').map((a) => a.address));
  // Both Nodes (e2e-node and the demo's own) hold an address of their own.
  expect(nodes.map((n) => n.metadata.name)).toEqual(expect.arrayContaining(['e2e-node', expect.stringMatching(/^demo-/)]));
  expect(held).toHaveLength(2);
  expect(new Set(held).size).toBe(2);
  expect(held).toContain(address);
}, 120_000);

it('runs its controller on a thread of its own, which did the demo\'s work and logs to the same file', () => {
  const threads = readdirSync(`/proc/${up.pid}/task`).map((tid) => ({
    tid: Number(tid),
    name: readFileSync(`/proc/${up.pid}/task/${tid}/comm`, 'utf8').trim(),
    // utime + stime, in clock ticks (fields 14 and 15, after the parenthesized name).
    ticks: readFileSync(`/proc/${up.pid}/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ').slice(11, 13).reduce((a, v) => a + Number(v), 0) ?? 0,
  }));
  const controller = threads.filter((t) => t.name === 'controller');
  expect(controller).toHaveLength(1);
  expect(controller[0]?.tid).not.toBe(up.pid);
  expect(controller[0]?.ticks).toBeGreaterThan(0);
  const loggers = readFileSync(path.join(dataDir, 'kube-identity.log'), 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l) => (JSON.parse(l) as { logger?: string }).logger);
  expect(loggers).toEqual(expect.arrayContaining(['apiserver', 'controller']));
});

it('a failing demo step says which step and why', async () => {
  // A loopback address is refused by the serving policy: the serving CSR stays pending.
  const demo = await runCli(['demo', '--kubeconfig', field('kubeconfig'), '--node', 'e2e-loop', '--address', '127.0.0.1', '--timeout', '3']);
  expect(demo.code).toBe(1);
  expect(demo.stdout).toContain(' 4. lease heartbeats:');
  expect(demo.stdout).not.toContain(' 5. ');
  expect(demo.stderr).toMatch(
    /step 5 \(serving certificate\) failed: CSR serving-csr-\w+ was not issued within 3s \(state: Pending\); last event: PolicyViolation: Left pending: kubelet serving policy: reserved-ip: IP address "127\.0\.0\.1" is loopback, link-local, unspecified, multicast or broadcast/,
  );
  // ...and which flag fixes it.
  expect(demo.stderr).toContain('pass --address with an IP inside --kubelet-serving-allowed-ip-ranges that no other Node holds');
}, 60_000);

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

it('keeps the data directory private: directory 0700, every file 0600, certificates 0644, with one warning', () => {
  expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
  const files = readdirSync(dataDir);
  const secrets = ['store.db', 'store.db-wal', 'kube-identity.log', 'kube-identity.pid', 'kubeconfig', 'ca.key', 'apiserver.key', 'admin.key', 'sa.key', 'workload-ca.key', 'encryption-config.yaml'];
  expect(files).toEqual(expect.arrayContaining([...secrets, 'ca.crt', 'apiserver.crt', 'admin.crt', 'workload-ca.crt']));
  for (const f of files) {
    const mode = (statSync(path.join(dataDir, f)).mode & 0o777).toString(8);
    expect([f, mode]).toEqual([f, f.endsWith('.crt') ? '644' : '600']);
  }
  const warnings = readFileSync(path.join(dataDir, 'kube-identity.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('data directory was readable by other users'));
  expect(warnings).toHaveLength(1);
  expect(JSON.parse(warnings[0] as string)).toMatchObject({ level: 40, paths: [dataDir, path.join(dataDir, 'kube-identity.log')] });
});

it('logs each field once per line, and reports the controller as leader on /metrics', async () => {
  const lines = readFileSync(path.join(dataDir, 'kube-identity.log'), 'utf8').split('\n').filter((l) => l !== '');
  expect(lines.length).toBeGreaterThan(5);
  for (const line of lines) {
    const keys = [...line.matchAll(/[{,]"([^"]+)":/g)].map((m) => m[1]);
    const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
    // JSON.parse would keep the last of two equal keys silently: count them in the text.
    expect([line, twice.filter((k) => k === 'component' || k === 'logger' || k === 'name')]).toEqual([line, []]);
  }
  // After the restart above, the new up's controller acquires the Lease a moment after its banner (a Lease the
  // old one failed to release is taken once it expires, 15 s): poll, as a dashboard would.
  const leader = /^leader_election_master_status\{name="kube-identity-controller"\} 1$/m;
  await until('up\'s controller to lead', async () => leader.test(await fetch(field('metrics')).then((r) => r.text())), 30_000);
}, 60_000);

it('says what is in the way of a second up and which flag to pass', async () => {
  const other = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-up2-'));
  try {
    const apiPort = new URL(field('API server')).port;
    const metricsPort = new URL(field('metrics')).port;
    const [sameDir, samePort, sameMetrics] = await Promise.all([
      runCli(['up', '--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0']),
      runCli(['up', '--data-dir', path.join(other, 'a'), '--port', apiPort, '--metrics-bind-address', '127.0.0.1:0']),
      runCli(['up', '--data-dir', path.join(other, 'b'), '--port', '0', '--metrics-bind-address', `127.0.0.1:${metricsPort}`]),
    ]);
    expect(sameDir).toMatchObject({ code: 1 });
    expect(sameDir.stderr).toContain(
      `data directory ${dataDir} is already used by another kube-identity process (pid ${up.pid}): stop it, or pass another --data-dir`,
    );
    expect(samePort).toMatchObject({ code: 1 });
    expect(samePort.stderr).toContain(`127.0.0.1:${apiPort} is already in use by another process: pass another --port (--port 0 picks a free port)`);
    expect(sameMetrics).toMatchObject({ code: 1 });
    expect(sameMetrics.stderr).toContain(`127.0.0.1:${metricsPort} is already in use by another process: pass another --metrics-bind-address`);
    // The failed starts left nothing behind: no data directory with a fresh CA for the next start to reuse.
    expect([existsSync(path.join(other, 'a')), existsSync(path.join(other, 'b'))]).toEqual([false, false]);
    expect(readdirSync(other)).toEqual([]);
    // The first one is still serving, its data directory whole.
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['ca.crt', 'ca.key', 'store.db', 'kubeconfig']));
    await run('kubectl', ['--kubeconfig', field('kubeconfig'), 'get', 'csr'], { env });
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
}, 240_000);

it("elects a leader: a second controller pointed at up stands by while up's holds the Lease", async () => {
  const kubeconfig = field('kubeconfig');
  const holder = async (): Promise<string> =>
    (await run('kubectl', ['--kubeconfig', kubeconfig, '-n', 'kube-system', 'get', 'lease', 'kube-identity-controller', '-o', 'jsonpath={.spec.holderIdentity}'], { env })).stdout;
  const upHolder = await holder();
  expect(upHolder).not.toBe('');
  const second = await startCliChild(
    ['controller', '--kubeconfig', kubeconfig, '--leader-election-identity', 'second', '--metrics-bind-address', '127.0.0.1:0', '--leader-election-retry-period', '1s'],
    (out) => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1],
  );
  try {
    // A kubelet joins while both run: its CSRs are decided once, by the Lease holder.
    const demo = await runCli(['demo', '--kubeconfig', kubeconfig]);
    expect([demo.code, demo.stderr]).toEqual([0, '']);
    expect(await holder()).toBe(upHolder);
    const metrics = await fetch(`${second.ready}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^leader_election_master_status\{name="kube-identity-controller"\} 0$/m);
    // The standby reconciled nothing and wrote nothing: no approvals, no 409s.
    expect(metrics).not.toMatch(/^controller_runtime_reconcile_total\{[^}]*\} [1-9]/m);
    expect(metrics).not.toMatch(/^rest_client_requests_total\{[^}]*code="409"[^}]*\} [1-9]/m);
    expect(second.output()).not.toContain('became leader');
    const upMetrics = await fetch(field('metrics')).then((r) => r.text());
    expect(upMetrics).toMatch(/^controller_runtime_reconcile_total\{[^}]*\} [1-9]/m);
  } finally {
    const exited = new Promise((r) => second.child.once('exit', r));
    second.child.kill('SIGTERM');
    await exited;
  }
}, 120_000);

it('stops on Ctrl-C and says so', async () => {
  const exited = new Promise((r) => up.once('exit', r));
  up.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(banner).toContain('kube-identity stopped.');
}, 30_000);
