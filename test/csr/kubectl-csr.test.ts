/**
 * kubectl 1.32 against the embedded server's CSR API: `get csr` (server-side table), `describe csr`,
 * and `certificate approve|deny`, which PUT the whole object to /approval as protobuf.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { b64, csrPem } from './helpers.js';
import { startCsrServer, type CsrTestServer } from './server.js';

const run = promisify(execFile);
const BASE = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

let srv: CsrTestServer;
let kubeconfig: string;

async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', path.join(path.dirname(kubeconfig), 'cache'), ...args], {
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function create(name: string, expirationSeconds?: number): Promise<void> {
  const spec: Record<string, unknown> = { request: b64(await csrPem()), signerName: 'example.com/my-signer', usages: ['client auth'] };
  if (expirationSeconds) spec.expirationSeconds = expirationSeconds;
  const res = await srv.request('alice', 'POST', BASE, {
    body: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec },
  });
  expect(res.status).toBe(201);
}

const conditions = async (name: string): Promise<{ type: string; reason?: string }[]> =>
  ((await srv.request('admin', 'GET', `${BASE}/${name}`)).json.status.conditions ?? []) as { type: string }[];

beforeAll(async () => {
  srv = await startCsrServer();
  kubeconfig = srv.kubeconfigFile('admin');
});

afterAll(async () => {
  await srv.close();
});

it('kubectl get csr prints the upstream columns', async () => {
  await create('k-get', 86400);
  const out = await kubectl('get', 'csr', 'k-get');
  expect(out.stderr).toBe('');
  const [header, row] = out.stdout.trim().split('\n');
  expect(header?.split(/\s{2,}/)).toEqual(['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
  expect(row?.split(/\s{2,}/).slice(2)).toEqual(['example.com/my-signer', 'alice', '24h', 'Pending']);
});

it('kubectl describe csr shows the request', async () => {
  await create('k-desc');
  const out = await kubectl('describe', 'csr', 'k-desc');
  expect(out.code).toBe(0);
  expect(out.stdout).toMatch(/Name:\s+k-desc/);
  expect(out.stdout).toMatch(/Requesting User:\s+alice/);
  expect(out.stdout).toMatch(/Signer:\s+example.com\/my-signer/);
  expect(out.stdout).toMatch(/Status:\s+Pending/);
  expect(out.stdout).toMatch(/Common Name:\s+system:node:worker-1/);
});

it('kubectl certificate approve, then deny fails as already approved', async () => {
  await create('k-approve');
  const approve = await kubectl('certificate', 'approve', 'k-approve');
  expect(approve.stderr).toBe('');
  expect(approve.stdout.trim()).toBe('certificatesigningrequest.certificates.k8s.io/k-approve approved');
  expect(await conditions('k-approve')).toMatchObject([{ type: 'Approved', reason: 'KubectlApprove' }]);
  const deny = await kubectl('certificate', 'deny', 'k-approve');
  expect(deny.code).not.toBe(0);
  expect(deny.stderr).toContain('certificate signing request "k-approve" is already Approved');
});

it('kubectl certificate deny', async () => {
  await create('k-deny');
  const deny = await kubectl('certificate', 'deny', 'k-deny');
  expect(deny.stdout.trim()).toBe('certificatesigningrequest.certificates.k8s.io/k-deny denied');
  expect(await conditions('k-deny')).toMatchObject([{ type: 'Denied', reason: 'KubectlDeny' }]);
  const get = await kubectl('get', 'csr', 'k-deny', '--no-headers');
  expect(get.stdout.trim().split(/\s{2,}/).at(-1)).toBe('Denied');
});
