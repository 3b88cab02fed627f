/**
 * Backend options through the real server: `--audit-log-path -` with `--audit-log-format legacy` (one
 * line per event on stdout in upstream's EventString form), and `--audit-webhook-mode blocking-strict`
 * (a request whose RequestReceived event cannot be delivered is refused with a 500 and counted).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { parsePolicy } from '../../src/apiserver/audit/policy.js';
import { ensureCredentials } from '../../src/apiserver/server/credentials.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { logAudit } from './helpers.js';

const POLICY = path.join(process.cwd(), 'test/audit/docs-example-policy.yaml');

let server: TestServer;
let stdout = '';
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'audit-backends-'));
  const out = new PassThrough();
  out.on('data', (c: Buffer) => (stdout += c.toString()));
  server = await startTestServer({ audit: { ...logAudit(POLICY, '-', { format: 'legacy' }), stdout: out } });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

it('writes legacy lines to stdout for "-", as upstream formats them', async () => {
  const r = await raw(server, 'POST', '/api/v1/namespaces/kube-system/configmaps', { body: { metadata: { name: 'legacy' } }, headers: { 'User-Agent': 'legacy-test/1.0' } });
  expect(r.status).toBe(201);
  const id = r.headers['audit-id'] as string;
  const deadline = Date.now() + 10_000;
  while (!stdout.includes(`id="${id}" stage="ResponseComplete"`) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  const line = stdout.split('\n').find((l) => l.includes(`id="${id}" stage="ResponseComplete"`));
  expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z AUDIT: /);
  expect(line?.slice(line.indexOf(' AUDIT: '))).toBe(
    ` AUDIT: id="${id}" stage="ResponseComplete" ip="127.0.0.1" method="create" user="kubernetes-admin" groups="\\"system:masters\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="legacy-test/1.0" namespace="kube-system" uri="/api/v1/namespaces/kube-system/configmaps" response="201"`,
  );
});

it('refuses a request with 500 when a blocking-strict webhook cannot take its RequestReceived event, and counts it', async () => {
  // A port nothing listens on: every delivery is refused.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const ca = (await ensureCredentials(path.join(dir, 'receiver'), ['127.0.0.1'])).caPem;
  const kubeconfig = path.join(dir, 'webhook.kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n  - name: r\n    cluster: {server: "https://127.0.0.1:${port}/audit", certificate-authority-data: ${Buffer.from(ca).toString('base64')}}\nusers:\n  - name: a\n    user: {token: t}\ncontexts:\n  - name: w\n    context: {cluster: r, user: a}\ncurrent-context: w\n`,
  );
  const policy = parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: None\n    nonResourceURLs: [/metrics]\n  - level: Metadata\n');
  const strict = await startTestServer({
    audit: {
      policy,
      stdout: process.stdout,
      webhook: { configFile: kubeconfig, mode: 'blocking-strict', initialBackoffMs: 10, batch: { bufferSize: 1, maxBatchSize: 1, maxBatchWaitMs: 0, asyncDelegate: false } },
    },
  });
  try {
    const refused = await raw(strict, 'GET', '/api/v1/namespaces/default/configmaps');
    expect(refused.status).toBe(500);
    expect(refused.json).toMatchObject({ kind: 'Status', status: 'Failure', code: 500 });
    const metrics = (await raw(strict, 'GET', '/metrics')).text;
    expect(metrics).toMatch(/^apiserver_audit_requests_rejected_total 1$/m);
    expect(metrics).toMatch(/^apiserver_audit_error_total\{plugin="webhook"\} [1-9]/m);
  } finally {
    await strict.close();
  }
}, 60_000);
