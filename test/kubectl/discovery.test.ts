import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.close();
});

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  const cacheDir = path.join(srv.dataDir, 'kubectl-cache');
  return run('kubectl', ['--kubeconfig', srv.kubeconfigPath, '--cache-dir', cacheDir, ...args], { timeout: 20000 });
}

describe('kubectl 1.32 against the embedded API server: discovery and OpenAPI', () => {
  it('api-resources prints every group without warnings', async () => {
    const { stdout, stderr } = await kubectl('api-resources', '--no-headers');
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^certificatesigningrequests\s+csr\s+certificates\.k8s\.io\/v1\s+false\s+CertificateSigningRequest$/m);
    expect(stdout).toMatch(/^serviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount$/m);
  });

  it('lists groups in kube-apiserver\'s priority order, legacy and aggregated', async () => {
    const upstream = ['apps', 'events.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io', 'certificates.k8s.io', 'rbac.authorization.k8s.io', 'coordination.k8s.io'];
    const legacy = JSON.parse((await kubectl('get', '--raw', '/apis')).stdout) as { groups: { name: string }[] };
    expect(legacy.groups.map((g) => g.name)).toEqual(upstream);
    const aggregated = await raw(srv, 'GET', '/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
    expect((aggregated.json as { items: { metadata: { name: string } }[] }).items.map((g) => g.metadata.name)).toEqual(upstream);
  });

  it('version reports Kubernetes 1.37 with our version as build metadata; kubectl 1.32 warns of the skew, nothing else', async () => {
    const { stdout, stderr } = await kubectl('version', '-o', 'json');
    // kubectl's own skew check (client 1.32, server 1.37): one line on stderr, the JSON on stdout intact.
    expect(stderr).toBe('WARNING: version difference between client (1.32) and server (1.37) exceeds the supported minor version skew of +/-1\n');
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string };
    expect(JSON.parse(stdout)).toMatchObject({ serverVersion: { major: '1', minor: '37', gitVersion: `v1.37.0+kube-identity.${pkg.version}` } });
  });

  it('explain csr.spec', async () => {
    const { stdout, stderr } = await kubectl('explain', 'csr.spec');
    expect(stderr).toBe('');
    expect(stdout).toMatch(/request\s+<string> -required-/);
  });

  it('create -f a ServiceAccount with default (strict) validation', async () => {
    const file = path.join(srv.dataDir, 'sa.yaml');
    fs.writeFileSync(file, 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: builder\n  namespace: default\n');
    const { stdout, stderr } = await kubectl('create', '-f', file);
    expect(stderr).toBe('');
    expect(stdout.trim()).toBe('serviceaccount/builder created');
  });

  it('create namespace sends a protobuf body that the server decodes', async () => {
    const { stdout, stderr } = await kubectl('create', 'namespace', 'proto-ns');
    expect(stderr).toBe('');
    expect(stdout.trim()).toBe('namespace/proto-ns created');
    const { stdout: got } = await kubectl('get', 'namespace', 'proto-ns', '-o', 'jsonpath={.metadata.name}');
    expect(got).toBe('proto-ns');
  });
});
