import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type DiscoveryServer, startDiscoveryServer } from './discovery-server.js';

const run = promisify(execFile);

let srv: DiscoveryServer;
beforeAll(async () => {
  srv = await startDiscoveryServer();
});
afterAll(async () => {
  await srv.close();
});

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('kubectl', ['--kubeconfig', srv.kubeconfig, '--cache-dir', srv.cacheDir, ...args], { timeout: 20000 });
}

describe('real kubectl 1.32 against our discovery and OpenAPI documents', () => {
  it('api-resources lists every resource from aggregated discovery, without warnings', async () => {
    const { stdout, stderr } = await kubectl('api-resources', '--no-headers', '-o', 'wide');
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    const csr = lines.find((l) => l.startsWith('certificatesigningrequests'));
    expect(csr).toMatch(/^certificatesigningrequests\s+csr\s+certificates\.k8s\.io\/v1\s+false\s+CertificateSigningRequest\s+create,delete,deletecollection,get,list,patch,update,watch\b/);
    expect(lines.find((l) => l.startsWith('serviceaccounts'))).toMatch(/^serviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount/);
    expect(lines.find((l) => l.startsWith('pods'))).toMatch(/\s+all$/);
    // Aggregated discovery means no per-group-version fetches.
    expect(srv.requests.filter((r) => r.startsWith('GET /apis/'))).toEqual([]);
  });

  it('explain csr.spec reads the field documentation from OpenAPI v3', async () => {
    const { stdout, stderr } = await kubectl('explain', 'csr.spec');
    expect(stderr).toBe('');
    expect(stdout).toContain('KIND:       CertificateSigningRequest');
    expect(stdout).toContain('GROUP:      certificates.k8s.io');
    expect(stdout).toContain('VERSION:    v1');
    expect(stdout).toMatch(/request\s+<string> -required-/);
    expect(stdout).toMatch(/signerName\s+<string> -required-/);
    expect(stdout).toMatch(/usages\s+<\[\]string>/);
  });

  it('explain walks nested references (ServiceAccount secrets)', async () => {
    const { stdout } = await kubectl('explain', 'sa.secrets');
    expect(stdout).toContain('KIND:       ServiceAccount');
    expect(stdout).toMatch(/fieldPath\s+<string>/);
  });
});
