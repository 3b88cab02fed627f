/**
 * `kube-identity apiserver` in a child process on a fresh data directory, as an operator runs it:
 * the bench learns the URL and CA from the kubeconfig the server writes there, and uses the static
 * admin client certificate (system:masters) from the same directory.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { CREDENTIAL_FILES } from '../../src/apiserver/server/credentials.js';
import { projectScript, spawnNode, waitUntil, type NodeProcess } from './child.js';
import { HttpClient, type HttpTarget } from './http-client.js';

export interface ApiServerProcess {
  /** URL, CA and the admin client certificate. */
  admin: HttpTarget;
  dataDir: string;
  kubeconfigPath: string;
  proc: NodeProcess;
  /** Stops the server and removes the data directory. */
  close(): Promise<void>;
}

export interface ApiServerProcessOptions {
  storage?: 'sqlite' | 'memory' | 'etcd';
  /** With storage etcd: the members' client URLs. */
  etcdServers?: string[];
  /** Run as another replica on this data directory (an etcd replica's): it is kept on close. */
  dataDir?: string;
  execArgv?: string[];
  /** More flags for `kube-identity apiserver` (the audit flags of `bench api --audit-policy=FILE`). */
  args?: string[];
  startTimeoutMs?: number;
}

interface KubeconfigFile {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
}

export async function startApiServerProcess(opts: ApiServerProcessOptions = {}): Promise<ApiServerProcess> {
  const shared = opts.dataDir !== undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'kube-identity-bench-'));
  // Replicas on one data directory each write their own kubeconfig (it names their URL).
  const kubeconfigPath = path.join(dataDir, shared ? `kubeconfig-${randomBytes(4).toString('hex')}` : 'kubeconfig');
  const etcd = opts.etcdServers ? ['--etcd-servers', opts.etcdServers.join(',')] : [];
  const proc = spawnNode(
    projectScript('src/cmd/main'),
    ['apiserver', '--data-dir', dataDir, '--kubeconfig-out', kubeconfigPath, '--port', '0', '--storage', opts.storage ?? 'sqlite', ...etcd, '--log-level', 'warn', ...(opts.args ?? [])],
    { execArgv: opts.execArgv },
  );
  const close = async (): Promise<void> => {
    await proc.stop();
    if (!shared) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const file = await waitUntil('the API server kubeconfig', () => (existsSync(kubeconfigPath) ? readFileSync(kubeconfigPath, 'utf8') : undefined), opts.startTimeoutMs ?? 60_000, proc);
    const kc = YAML.parse(file) as KubeconfigFile;
    const cluster = kc.clusters[0]?.cluster;
    const client = { certPem: readFileSync(path.join(dataDir, CREDENTIAL_FILES.adminCertPem), 'utf8'), keyPem: readFileSync(path.join(dataDir, CREDENTIAL_FILES.adminKeyPem), 'utf8') };
    if (!cluster) throw new Error(`unexpected kubeconfig in ${kubeconfigPath}`);
    const admin: HttpTarget = { url: cluster.server, caPem: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'), client };
    const probe = new HttpClient(admin, 1);
    await waitUntil('the API server to be ready', async () => ((await probe.request('GET', '/readyz').catch(() => undefined))?.status === 200 ? true : undefined), 30_000, proc);
    probe.close();
    return { admin, dataDir, kubeconfigPath, proc, close };
  } catch (err) {
    await close();
    throw err;
  }
}
