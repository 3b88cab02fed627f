/**
 * Controller memory with N issued kubelet CSRs in its informers (10k and 50k by default). A real CSR
 * is created, approved and issued through an in-process embedded API server (memory store); N copies of the
 * stored object (fresh names and uids) are then written straight to its store so setting up 50k
 * takes seconds. In a child process each, we measure the CSR informer alone (lower bound: the cache
 * itself) and, when `kube-identity controller` exists, the whole controller after its informers
 * synced and its queues drained: resident set then, and the peak (VmHWM) including the initial LIST.
 * Run: `node dist/bench/cache.js [N ...]` after `npm run build`, or call runCacheBench().
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KObject } from '../src/api/meta.js';
import { ensureCredentials, CREDENTIAL_FILES } from '../src/apiserver/server/credentials.js';
import { startEmbeddedServer } from '../src/apiserver/server/embedded.js';
import { MemoryStore } from '../src/apiserver/storage/memory/memory.js';
import { storageKey } from '../src/apiserver/storage/store.js';
import { silentLogger } from '../src/log/logger.js';
import { parseCertificateRequestPem } from '../src/pki/csr.js';
import { issueCertificate } from '../src/pki/issue.js';
import { projectScript, spawnNode, waitUntil, type NodeProcess } from './lib/child.js';
import { metricMax, metricSum, startControllerProcess } from './lib/controller-process.js';
import { HttpClient } from './lib/http-client.js';
import { KUBELET_CLIENT_USAGES, kubeletCsrObject, kubeletCsrPems } from './lib/kubelet-csr.js';
import { formatTable, isMain, machine, mb, printResult, round, type Machine } from './lib/report.js';
import { parseBenchArgs } from './lib/cli.js';

export interface ProcessMemory {
  /** Resident set once synced (and, for the controller, its queues drained) and settled. */
  rssMb: number;
  /** Highest resident set of the process (VmHWM), including the initial LIST. */
  peakRssMb: number;
  /** From start of the process to a synced cache (and drained queues). */
  readySeconds: number;
  /** Informer alone: V8 heap after a full GC. */
  heapUsedMb?: number;
}

export interface CacheRow {
  csrs: number;
  informer: ProcessMemory;
  controller?: ProcessMemory;
}

export interface CacheBenchResult extends Machine {
  name: 'cache';
  params: { sizes: number[]; objectJsonBytes: number; managedFieldsEntries: number; settleMs: number };
  /** False when told not to measure the controller (`controller: false`): only the informer was. */
  controllerMeasured: boolean;
  results: CacheRow[];
}

const CSR_PREFIX = storageKey('certificates.k8s.io', 'certificatesigningrequests', undefined);

/** A CSR created, approved and issued through the API, as the store then holds it. */
async function issuedCsrTemplate(client: HttpClient, ca: { certPem: string; keyPem: string }): Promise<KObject> {
  const [pem] = await kubeletCsrPems(1);
  const base = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
  const created = await client.json<KObject>('POST', base, kubeletCsrObject('template', pem as string));
  const approved = await client.json<KObject>('PUT', `${base}/template/approval`, {
    ...created,
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' }] },
  });
  const parsed = parseCertificateRequestPem(pem as string);
  const now = Date.now();
  const certPem = await issueCertificate(ca, { subject: parsed.subject, publicKeyDer: parsed.publicKeyDer, usages: KUBELET_CLIENT_USAGES, notBefore: new Date(now - 300_000), notAfter: new Date(now + 365 * 86_400_000) });
  const issued = await client.json<KObject>('PUT', `${base}/template/status`, { ...approved, status: { ...(approved.status as object), certificate: Buffer.from(certPem).toString('base64') } });
  const metadata = { ...issued.metadata };
  delete metadata.resourceVersion;
  return { ...issued, metadata };
}

/** Waits `settleMs` after readiness, then reads the child's memory. */
async function settle(proc: NodeProcess, started: number, settleMs: number): Promise<ProcessMemory> {
  const readySeconds = round((performance.now() - started) / 1000, 2);
  await new Promise((r) => setTimeout(r, settleMs));
  const m = proc.memory();
  return { rssMb: mb(m.rss), peakRssMb: mb(m.peakRss), readySeconds };
}

async function measureInformer(kubeconfig: string, n: number, settleMs: number): Promise<ProcessMemory> {
  let report: { objects: number; heapUsed: number } | undefined;
  const started = performance.now();
  const proc = spawnNode(projectScript('bench/lib/informer-child'), [kubeconfig], { execArgv: ['--expose-gc'], onStdout: (l) => (report = JSON.parse(l) as typeof report) });
  try {
    const r = await waitUntil('the informer to sync', () => report, 120_000, proc);
    if (r.objects !== n) throw new Error(`informer cached ${r.objects} CSRs, expected ${n}`);
    return { ...(await settle(proc, started, settleMs)), heapUsedMb: mb(r.heapUsed) };
  } finally {
    await proc.stop();
  }
}

async function measureController(dir: string, kubeconfig: string, n: number, settleMs: number): Promise<ProcessMemory> {
  const started = performance.now();
  const ctl = await startControllerProcess({ kubeconfig, caCertFile: path.join(dir, CREDENTIAL_FILES.caPem), caKeyFile: path.join(dir, CREDENTIAL_FILES.caKeyPem) });
  try {
    await waitUntil('the controller to cache every CSR and drain its queues', async () => {
      const text = await ctl.metrics();
      return metricMax(text, 'kube_identity_informer_objects') >= n && metricSum(text, 'workqueue_depth') === 0 ? true : undefined;
    }, 180_000, ctl.proc);
    return await settle(ctl.proc, started, settleMs);
  } finally {
    await ctl.close();
  }
}

export async function runCacheBench(opts: { sizes?: number[]; settleMs?: number; controller?: boolean } = {}): Promise<CacheBenchResult> {
  const sizes = opts.sizes ?? [10_000, 50_000];
  const settleMs = opts.settleMs ?? 2000;
  const withController = opts.controller ?? true;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-bench-cache-'));
  const credentials = await ensureCredentials(dir);
  const ca = { certPem: credentials.caPem, keyPem: credentials.caKeyPem };
  const results: CacheRow[] = [];
  let template: KObject | undefined;
  try {
    for (const n of sizes) {
      const store = new MemoryStore();
      const server = await startEmbeddedServer({ dataDir: dir, logger: silentLogger(), store, port: 0 });
      const client = new HttpClient({ url: server.url, caPem: credentials.caPem, client: { certPem: credentials.adminCertPem, keyPem: credentials.adminKeyPem } });
      try {
        const kubeconfig = server.kubeconfigPath;
        template ??= await issuedCsrTemplate(client, ca);
        await store.delete(`${CSR_PREFIX}template`).catch(() => undefined);
        for (let i = 0; i < n; i++) {
          const name = `node-csr-${String(i).padStart(6, '0')}`;
          await store.create(`${CSR_PREFIX}${name}`, { ...template, metadata: { ...template.metadata, name, uid: randomUUID() } });
        }
        const informer = await measureInformer(kubeconfig, n, settleMs);
        const controller = withController ? await measureController(dir, kubeconfig, n, settleMs) : undefined;
        results.push({ csrs: n, informer, ...(controller ? { controller } : {}) });
      } finally {
        client.close();
        await server.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const managedFields = (template?.metadata as { managedFields?: unknown[] } | undefined)?.managedFields ?? [];
  return {
    name: 'cache',
    params: { sizes, objectJsonBytes: template ? JSON.stringify(template).length : 0, managedFieldsEntries: managedFields.length, settleMs },
    controllerMeasured: withController,
    results,
    ...machine(),
  };
}

export function formatCacheTable(r: CacheBenchResult): string {
  const cell = (m: ProcessMemory | undefined, k: keyof ProcessMemory): string => (m?.[k] === undefined ? '-' : String(m[k]));
  const rows = r.results.map((row) => [String(row.csrs), cell(row.informer, 'rssMb'), cell(row.informer, 'peakRssMb'), cell(row.informer, 'heapUsedMb'), cell(row.informer, 'readySeconds'), cell(row.controller, 'rssMb'), cell(row.controller, 'peakRssMb'), cell(row.controller, 'readySeconds')]);
  return [
    `cache: issued kubelet CSRs of ${r.params.objectJsonBytes} B JSON (${r.params.managedFieldsEntries} managedFields entries); controller ${r.controllerMeasured ? 'measured' : 'not measured (informer only)'}; ${r.cores} cores; node ${r.node}`,
    formatTable(['CSRs', 'informer RSS MB', 'peak MB', 'heap MB', 'ready s', 'controller RSS MB', 'peak MB', 'ready s'], rows),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const args = parseBenchArgs(process.argv.slice(2), { command: 'bench/cache', usage: 'usage: node dist/bench/cache.js [N ...]\nThe informer and controller memory with N issued CSRs in the store, for each N given.', options: {}, positionals: Infinity });
  const sizes = args.positionals.map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) args.fail(`each N must be a positive integer, got ${args.positionals.join(' ')}`);
  const result = await runCacheBench(sizes.length ? { sizes } : {});
  printResult(result, formatCacheTable(result));
}
