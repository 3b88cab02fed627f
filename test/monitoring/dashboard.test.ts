/**
 * The Grafana dashboard (charts/kube-identity/dashboards/kube-identity.json) against a real Prometheus
 * scraping real controllers: `kube-identity up` (API server + controller) and a second controller with
 * leader election, as the chart's Deployment runs it. After the demo (a node joins), a client CSR the
 * signer refuses, one left for a human to approve and a serving CSR the serving approver's policy
 * refuses, every panel's PromQL is evaluated through
 * Prometheus' HTTP API and must return series: a renamed metric or a broken query fails here.
 */
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { CLI_ENV, logLine, runCli, startCliChild, startUpChild } from '../helpers/cli.js';
import { startPrometheus, type Prometheus } from '../helpers/prometheus.js';
import { describeWithTools } from '../helpers/tools.js';

const run = promisify(execFile);
const JOB = 'kube-identity';
const DASHBOARD = path.join(process.cwd(), 'charts/kube-identity/dashboards/kube-identity.json');

interface Target {
  refId: string;
  expr: string;
}
interface Panel {
  title: string;
  type: string;
  targets?: Target[];
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[]; templating: { list: { name: string; definition?: string }[] } };
const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, refId: t.refId, expr: t.expr })));

/** What Grafana substitutes before sending a query: the job variable, and a rate window of a few scrapes. */
const substitute = (expr: string): string => expr.replaceAll('$__rate_interval', '10s').replaceAll('$job', JOB);

describeWithTools(['prometheus', 'kubectl'])('the dashboard on a real Prometheus', () => {
  let dataDir: string;
  let kubeconfig: string;
  const children: ChildProcess[] = [];
  const metricsUrls: string[] = [];
  let prom: Prometheus | undefined;

  const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', kubeconfig, ...args], { env: CLI_ENV });

  async function createCsr(name: string, signerName: string, usages: string[], subject: { commonName: string; organizations?: string[] }): Promise<void> {
    const { privateKeyPem } = generateKeyPair('ECDSA-P256');
    const request = Buffer.from(await createCertificateRequestPem({ privateKeyPem, ...subject })).toString('base64');
    const file = path.join(dataDir, `${name}.json`);
    const csr = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request, signerName, usages } };
    writeFileSync(file, JSON.stringify(csr));
    await kubectl('create', '-f', file);
  }

  /** Resolves once every expression returns series (polling Prometheus as it scrapes). */
  async function waitForSeries(exprs: string[]): Promise<void> {
    for (let i = 0; i < 300; i++) {
      const counts = await Promise.all(exprs.map((e) => prom!.query(e).then((r) => r.length)));
      if (counts.every((n) => n > 0)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no series yet for ${exprs.join(', ')}`);
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-dashboard-'));
    const up = await startUpChild(['--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0', '--storage', 'memory']);
    children.push(up.child);
    kubeconfig = path.resolve(up.field('kubeconfig'));
    metricsUrls.push(up.field('metrics'));
    const controller = await startCliChild(
      [
        'controller',
        `--kubeconfig=${kubeconfig}`,
        '--leader-elect=true',
        '--leader-election-namespace=default',
        '--approve-kubelet-serving=true',
        '--metrics-bind-address=127.0.0.1:0',
        `--cluster-signing-cert-file=${path.join(dataDir, 'ca.crt')}`,
        `--cluster-signing-key-file=${path.join(dataDir, 'ca.key')}`,
      ],
      (out) => logLine(out, 'serving metrics and probes'),
    );
    children.push(controller.child);
    metricsUrls.push(`${String(controller.ready.url)}/metrics`);
    prom = await startPrometheus(JOB, metricsUrls.map((u) => new URL(u).host));

    // A node joins (client and serving certificates); a client CSR asks for server auth (the signer marks it Failed once approved); another
    // waits for a human; the admin, who is no node, asks for a kubelet serving certificate (the serving
    // approver's `requester` rule leaves it pending).
    const demo = runCli(['demo', '--kubeconfig', kubeconfig, '--node', 'dashboard-node'], { timeoutMs: 60_000 });
    const client = 'kubernetes.io/kube-apiserver-client';
    await createCsr('asks-for-server-auth', client, ['digital signature', 'server auth'], { commonName: 'alice' });
    await kubectl('certificate', 'approve', 'asks-for-server-auth');
    await createCsr('waits-for-a-human', client, ['digital signature', 'client auth'], { commonName: 'bob' });
    const node = { commonName: 'system:node:dashboard-node', organizations: ['system:nodes'] };
    await createCsr('serving-not-from-a-node', 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth'], node);
    const result = await demo;
    if (result.code !== 0) throw new Error(`demo failed: ${result.stdout} ${result.stderr}`);
    await waitForSeries([
      'kube_identity_csr_issuances_total',
      'kube_identity_csr_failures_total',
      'kube_identity_csr_oldest_pending_age_seconds',
      'kube_identity_csr_policy_violations_total',
      'leader_election_master_status == 1',
    ]);
    // A few more scrapes, so that every rate window holds two samples of each series.
    await new Promise((r) => setTimeout(r, 3_000));
  }, 120_000);

  afterAll(async () => {
    await prom?.close();
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads only metrics the controllers export', async () => {
    const exported = new Set<string>();
    for (const url of metricsUrls) {
      const text = await fetch(url).then((r) => r.text());
      for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        exported.add(m[1] ?? '');
        if (m[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exported.add(`${m[1]}${s}`);
      }
    }
    const read = new Set(targets.flatMap((t) => [...t.expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1] ?? '')));
    expect(read.size).toBeGreaterThan(15);
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
  });

  it('returns series for every panel query', async () => {
    expect(targets.length).toBeGreaterThan(15);
    const empty: string[] = [];
    for (const t of targets) if ((await prom!.query(substitute(t.expr))).length === 0) empty.push(`${t.panel} ${t.refId}: ${t.expr}`);
    expect(empty).toEqual([]);
  });

  it('shows the decisions that happened, the pending CSR and the leader', async () => {
    const query = (title: string) => prom!.query(substitute(targets.find((t) => t.panel === title)?.expr ?? 'missing'));
    const decisions = await query('CSR decisions by signer');
    expect(new Set(decisions.map((s) => `${s.metric.decision} ${s.metric.signer}`))).toEqual(
      new Set([
        'approved kubernetes.io/kube-apiserver-client-kubelet',
        'issued kubernetes.io/kube-apiserver-client-kubelet',
        'approved kubernetes.io/kubelet-serving',
        'issued kubernetes.io/kubelet-serving',
        'failed kubernetes.io/kube-apiserver-client',
      ]),
    );
    expect((await query('Oldest pending CSR')).map((s) => s.metric.signer).sort()).toEqual(['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kubelet-serving']);
    expect((await query('Policy violations by rule')).map((s) => `${s.metric.signer} ${s.metric.rule}`)).toEqual(['kubernetes.io/kubelet-serving requester']);
    expect((await query('Leader')).some((s) => s.value[1] === '1')).toBe(true);
    const expiresIn = (await query('Signer CA expires in')).map((s) => Number(s.value[1]));
    expect(expiresIn.length).toBeGreaterThan(0);
    for (const seconds of expiresIn) expect(seconds).toBeGreaterThan(30 * 86400);
  });

  it('lists the scraped job in the dashboard job variable', async () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'job');
    expect(variable?.definition).toBe('label_values(kube_identity_build_info, job)');
    expect(await prom!.labelValues('job', 'kube_identity_build_info')).toEqual([JOB]);
  });
});
