/**
 * The admin credential: a client certificate (CN=kubernetes-admin, O=system:masters, a year, as
 * kubeadm's admin.conf) in the kubeconfig the server writes, renewed by
 * `kube-identity kubeconfig admin --renew`; the static admin token of earlier versions is gone.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { X509Certificate } from '@peculiar/x509';
import YAML from 'yaml';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { CLI_ENV, runCli } from '../helpers/cli.js';
import { raw } from '../helpers/http.js';

const run = promisify(execFile);
const DAY_MS = 86_400_000;

function kubeconfigCert(file: string): X509Certificate {
  const kc = YAML.parse(readFileSync(file, 'utf8')) as { users: { user: Record<string, string> }[] };
  return new X509Certificate(Buffer.from(kc.users[0]!.user['client-certificate-data']!, 'base64').toString('utf8'));
}

async function whoami(kubeconfig: string): Promise<{ username: string; groups: string[] }> {
  const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, 'auth', 'whoami', '-o', 'json'], { env: CLI_ENV });
  return (JSON.parse(stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
}

describe('admin credentials', () => {
  let dir: string;
  let server: EmbeddedServer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'admin-credentials-'));
    // A data directory from an earlier version: its static admin token must no longer let anyone in.
    writeFileSync(path.join(dir, 'admin.token'), 'old-static-admin-token\n', { mode: 0o600 });
    server = await startEmbeddedServer({ dataDir: dir, logger: silentLogger(), port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes a kubeconfig whose client certificate is kubernetes-admin in system:masters and expires after a year', async () => {
    const cert = kubeconfigCert(server.kubeconfigPath);
    // Go's pkix.Name order, as kubeadm's certificate has it: O before CN.
    expect(cert.subject).toBe('O=system:masters, CN=kubernetes-admin');
    const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
    expect(Math.round(lifetime / DAY_MS)).toBe(365);
    expect(server.adminCertificateExpiry.toISOString()).toBe(cert.notAfter.toISOString());
    expect(await whoami(server.kubeconfigPath)).toMatchObject({ username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] });
  });

  it('makes no static admin token, and does not accept the one an older version left', async () => {
    const target = { url: server.url, caPem: server.credentials.caPem, admin: { token: 'old-static-admin-token' } };
    expect((await raw(target, 'GET', '/api/v1/namespaces')).status).toBe(401);
    expect(Object.keys(server.credentials)).not.toContain('adminToken');
  });

  it('renews the certificate with one command, keeping the server the kubeconfig names', async () => {
    const before = kubeconfigCert(server.kubeconfigPath);
    const shown = await runCli(['kubeconfig', 'admin', '--data-dir', dir]);
    expect(shown.stdout).toContain(`valid until ${before.notAfter.toISOString()} (364 days left)`);

    const renewed = await runCli(['kubeconfig', 'admin', '--renew', '--data-dir', dir]);
    expect([renewed.code, renewed.stderr]).toEqual([0, '']);
    const after = kubeconfigCert(server.kubeconfigPath);
    expect(renewed.stdout).toContain(`valid until ${after.notAfter.toISOString()}`);
    expect(after.serialNumber).not.toBe(before.serialNumber);
    expect(after.notAfter.getTime()).toBeGreaterThan(before.notAfter.getTime());
    expect(after.subject).toBe(before.subject);
    expect(readFileSync(path.join(dir, 'admin.crt'), 'utf8')).toBe(after.toString('pem') + '\n');
    expect((YAML.parse(readFileSync(server.kubeconfigPath, 'utf8')) as { clusters: { cluster: { server: string } }[] }).clusters[0]!.cluster.server).toBe(server.url);
    // The running server trusts the new certificate: it is its CA's.
    expect((await whoami(server.kubeconfigPath)).username).toBe('kubernetes-admin');
  }, 60_000);
});
