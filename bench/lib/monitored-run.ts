/**
 * A real run for the dashboard, watched by a real Prometheus: `kube-identity up` (API server and a
 * controller without leader election) and a second controller with leader election and the serving
 * approver, as the chart's Deployment runs it, each scraped every second. The dashboard test
 * (test/monitoring/dashboard.test.ts) and the dashboard picture (bench/dashboard.ts) both run on it.
 */
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CREDENTIAL_FILES } from '../../src/apiserver/server/credentials.js';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { projectScript, spawnNode, waitUntil, type NodeProcess } from './child.js';
import { freePort } from './free-port.js';
import { HttpClient } from './http-client.js';
import { CSR_PATH } from './kubelet-csr.js';
import { startPrometheus, type Prometheus } from './prometheus.js';

export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

export interface MonitoredRun {
  /** The Prometheus job both controllers are scraped as. */
  job: string;
  dataDir: string;
  kubeconfig: string;
  /** Both controllers' /metrics URLs. */
  metricsUrls: string[];
  prom: Prometheus;
  /** The API server as the cluster admin (system:masters). */
  admin: HttpClient;
  /** Creates a CSR for a fresh P-256 key as the admin. */
  createCsr(name: string, signerName: string, usages: string[], subject: { commonName: string; organizations?: string[] }): Promise<void>;
  /** Approves a CSR as `kubectl certificate approve` does (an Approved condition through /approval). */
  approve(name: string): Promise<void>;
  /**
   * `kube-identity demo --node NODE --address IP`: a kubelet joins (client and serving certificates, Node,
   * Lease); rejects unless it exits 0. Each node needs its own address: the serving policy refuses an IP
   * another Node has.
   */
  demo(node: string, address?: string): Promise<void>;
  close(): Promise<void>;
}

/** Runs a project command to its end; rejects with its stderr unless it exits 0. */
async function runToEnd(args: string[], timeoutMs: number): Promise<void> {
  const proc = spawnNode(projectScript('src/cmd/main'), args);
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => void proc.stop(), timeoutMs);
    proc.child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  if (code !== 0) throw new Error(`kube-identity ${args[0]} exited ${code}: ${proc.stderrTail()}`);
}

/** `up` on a fresh data directory; resolves with its banner's fields once it printed it. */
async function startUp(dataDir: string): Promise<{ proc: NodeProcess; field(name: string): string }> {
  let out = '';
  const proc = spawnNode(projectScript('src/cmd/main'), ['up', '--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0', '--storage', 'memory'], {
    onStdout: (line) => (out += `${line}\n`),
  });
  await waitUntil('kube-identity up', () => (out.includes('Press Ctrl-C to stop.') ? true : undefined), 90_000, proc);
  const field = (name: string): string => {
    const line = out.split('\n').find((l) => l.trim().startsWith(`${name} `));
    if (!line) throw new Error(`the banner of up has no ${name}: ${out}`);
    return line.trim().slice(name.length).trim();
  };
  return { proc, field };
}

/** A controller with leader election in the default namespace, the serving approver on as up runs it, metrics on `port`. */
async function startLeaderElectingController(kubeconfig: string, dataDir: string, port: number): Promise<NodeProcess> {
  const proc = spawnNode(projectScript('src/cmd/main'), [
    'controller',
    `--kubeconfig=${kubeconfig}`,
    '--leader-elect=true',
    '--leader-election-namespace=default',
    '--approve-kubelet-serving=true',
    `--metrics-bind-address=127.0.0.1:${port}`,
    // As up's own controller: the client signers sign with the cluster CA, kubelet-serving with up's
    // serving CA, the workload signer with up's workload CA (both publish the same trust bundles, neither
    // deletes the other's), and these nodes are in no DNS.
    `--cluster-signing-kube-apiserver-client-cert-file=${path.join(dataDir, CREDENTIAL_FILES.caPem)}`,
    `--cluster-signing-kube-apiserver-client-key-file=${path.join(dataDir, CREDENTIAL_FILES.caKeyPem)}`,
    `--cluster-signing-kubelet-client-cert-file=${path.join(dataDir, CREDENTIAL_FILES.caPem)}`,
    `--cluster-signing-kubelet-client-key-file=${path.join(dataDir, CREDENTIAL_FILES.caKeyPem)}`,
    `--cluster-signing-kubelet-serving-cert-file=${path.join(dataDir, CREDENTIAL_FILES.kubeletServingCaPem)}`,
    `--cluster-signing-kubelet-serving-key-file=${path.join(dataDir, CREDENTIAL_FILES.kubeletServingCaKeyPem)}`,
    '--kubelet-serving-bypass-dns-resolution=true',
    '--workload-signer-names=kube-identity.io/workload',
    `--workload-signer-cert-file=${path.join(dataDir, CREDENTIAL_FILES.workloadCaPem)}`,
    `--workload-signer-key-file=${path.join(dataDir, CREDENTIAL_FILES.workloadCaKeyPem)}`,
  ]);
  const answers = (): Promise<true | undefined> => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => (r.ok ? true : undefined), () => undefined);
  await waitUntil('the leader-electing controller', answers, 90_000, proc);
  return proc;
}

export async function startMonitoredRun(job = 'kube-identity'): Promise<MonitoredRun> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-monitored-'));
  const procs: NodeProcess[] = [];
  let prom: Prometheus | undefined;
  let admin: HttpClient | undefined;
  const close = async (): Promise<void> => {
    admin?.close();
    await prom?.close();
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const up = await startUp(dataDir);
    procs.push(up.proc);
    const kubeconfig = path.resolve(up.field('kubeconfig'));
    const port = await freePort();
    procs.push(await startLeaderElectingController(kubeconfig, dataDir, port));
    const metricsUrls = [up.field('metrics'), `http://127.0.0.1:${port}/metrics`];
    prom = await startPrometheus(job, metricsUrls.map((u) => new URL(u).host));
    const cert = { certPem: readFileSync(path.join(dataDir, CREDENTIAL_FILES.adminCertPem), 'utf8'), keyPem: readFileSync(path.join(dataDir, CREDENTIAL_FILES.adminKeyPem), 'utf8') };
    const client = new HttpClient({ url: up.field('API server'), caPem: readFileSync(path.join(dataDir, CREDENTIAL_FILES.caPem), 'utf8'), client: cert }, 8);
    admin = client;
    return {
      job,
      dataDir,
      kubeconfig,
      metricsUrls,
      prom,
      admin,
      async createCsr(name, signerName, usages, subject) {
        const { privateKeyPem } = generateKeyPair('ECDSA-P256');
        const request = Buffer.from(await createCertificateRequestPem({ privateKeyPem, ...subject })).toString('base64');
        await client.json('POST', CSR_PATH, { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request, signerName, usages } });
      },
      async approve(name) {
        const csr = await client.json<{ status?: { conditions?: object[] } }>('GET', `${CSR_PATH}/${name}`);
        const approved = { type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'This CSR was approved by kubectl certificate approve.', lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
        await client.json('PUT', `${CSR_PATH}/${name}/approval`, { ...csr, status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []), approved] } });
      },
      demo: (node, address) => runToEnd(['demo', '--kubeconfig', kubeconfig, '--node', node, ...(address ? ['--address', address] : [])], 90_000),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
