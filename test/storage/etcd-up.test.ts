/**
 * `kube-identity up --storage etcd` as a user runs it: kubectl reads and writes through it, the
 * objects land in etcd where kube-apiserver keeps them, and the controller approves and issues a
 * joining node's CSR (the `demo` command) through the API server on etcd.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Etcd3 } from 'etcd3';
import { CLI, CLI_ENV, startUpChild, type UpChild } from '../helpers/cli.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { describeWithTools } from '../helpers/tools.js';

const run = promisify(execFile);

describeWithTools(['etcd'])('up --storage etcd', () => {
  let etcd: EtcdCluster;
  let dataDir: string;
  let up: UpChild;
  let kubeconfig: string;
  const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { env: CLI_ENV })).stdout;

  beforeAll(async () => {
    etcd = await startEtcd();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'up-etcd-'));
    const flags = ['--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0'];
    up = await startUpChild([...flags, '--storage', 'etcd', '--etcd-servers', etcd.endpoints.join(','), '--etcd-prefix', '/kube-identity']);
    kubeconfig = up.field('kubeconfig');
  }, 90_000);
  afterAll(async () => {
    if (up && up.child.exitCode === null) {
      const exited = new Promise((r) => up.child.once('exit', r));
      up.child.kill('SIGTERM');
      await exited;
    }
    await etcd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves kubectl get and create, with the objects in etcd under --etcd-prefix', async () => {
    expect(await kubectl('get', 'namespaces', '-o', 'name')).toContain('namespace/kube-system');
    expect(await kubectl('create', 'configmap', 'demo', '--from-literal=greeting=hello')).toContain('configmap/demo created');
    const cm = JSON.parse(await kubectl('get', 'configmap', 'demo', '-o', 'json')) as { data: Record<string, string>; metadata: { resourceVersion: string } };
    expect(cm.data).toEqual({ greeting: 'hello' });

    const client = new Etcd3({ hosts: etcd.endpoints });
    try {
      const kv = (await client.kv.range({ key: Buffer.from('/kube-identity/configmaps/default/demo') })).kvs[0];
      expect(kv?.mod_revision).toBe(cm.metadata.resourceVersion);
      expect(JSON.parse(kv?.value.toString() ?? '{}').data).toEqual({ greeting: 'hello' });
      expect(await client.getAll().prefix('/registry/').keys()).toEqual([]);
    } finally {
      client.close();
    }
  });

  it("lets the controller approve and issue a joining node's CSRs", async () => {
    const demo = await run(process.execPath, [...CLI, 'demo', '--kubeconfig', kubeconfig, '--node', 'etcd-node'], { env: CLI_ENV, timeout: 90_000 });
    expect(demo.stdout).toContain('the server says this node is system:node:etcd-node (groups: system:nodes, system:authenticated)');
    const csrs = JSON.parse(await kubectl('get', 'csr', '-o', 'json')) as {
      items: { spec: { signerName: string }; status: { conditions: { type: string; reason: string }[]; certificate?: string } }[];
    };
    // The bootstrap client certificate, the serving certificate and the rotated client certificate.
    expect(csrs.items.map((c) => c.spec.signerName).sort()).toEqual([
      'kubernetes.io/kube-apiserver-client-kubelet',
      'kubernetes.io/kube-apiserver-client-kubelet',
      'kubernetes.io/kubelet-serving',
    ]);
    for (const csr of csrs.items) {
      expect(csr.status.conditions.map((c) => [c.type, c.reason])).toEqual([['Approved', 'AutoApproved']]);
      expect(csr.status.certificate).toBeTruthy();
    }
  }, 120_000);
});
