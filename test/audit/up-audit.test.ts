/**
 * What `up` audits by default, as an operator reads it: its policy file and log in the data
 * directory (named in the banner), who approved each CSR (the controller as its own user, a person
 * with kubectl as theirs), and never a credential: tokens minted through TokenRequest, reviewed
 * through TokenReview, or a Secret's data, in the audit log or up's own; the Secret is sealed on disk.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { CLI_ENV as env, kill9, startUpChild, type UpChild } from '../helpers/cli.js';
import { describeWithTools } from '../helpers/tools.js';
import { eventsWhen } from './helpers.js';

const run = promisify(execFile);

let up: UpChild;
let dataDir: string;
let kubeconfig: string;
const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { env })).stdout;

async function applyCsr(name: string, signerName: string, subject: { commonName: string; organizations?: string[] }): Promise<void> {
  const request = await createCertificateRequestPem({ privateKeyPem: generateKeyPair().privateKeyPem, ...subject });
  const csr = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(request).toString('base64'), signerName, usages: ['digital signature', 'client auth'] },
  };
  const file = path.join(dataDir, `${name}.json`);
  (await import('node:fs')).writeFileSync(file, JSON.stringify(csr));
  await kubectl('create', '-f', file);
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-up-audit-'));
  up = await startUpChild(['--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0']);
  kubeconfig = up.field('kubeconfig');
}, 60_000);

afterAll(async () => {
  await kill9(up.child);
  rmSync(dataDir, { recursive: true, force: true });
});

it('names its audit log and policy in the banner, both in the data directory', () => {
  expect(up.field('audit log')).toBe(`${path.join(dataDir, 'audit.log')}  (policy ${path.join(dataDir, 'audit-policy.yaml')})`);
  expect(readFileSync(path.join(dataDir, 'audit-policy.yaml'), 'utf8')).toContain('kind: Policy');
});

it('records the controller\'s approval as its own user and a kubectl approval as the person\'s', async () => {
  const log = path.join(dataDir, 'audit.log');
  // Requested by the admin for a node: the controller approves it (the admin may ask for node client certificates).
  await applyCsr('audit-node-csr', 'kubernetes.io/kube-apiserver-client-kubelet', { commonName: 'system:node:audit-node', organizations: ['system:nodes'] });
  // A client certificate for a person: only a person approves those.
  await applyCsr('audit-client-csr', 'kubernetes.io/kube-apiserver-client', { commonName: 'jane' });
  await kubectl('certificate', 'approve', 'audit-client-csr');

  const approval = (name: string) => (e: { verb: string; objectRef?: { name?: string; subresource?: string } }) =>
    e.objectRef?.name === name && e.objectRef.subresource === 'approval' && e.verb === 'update';
  const issued = (name: string) => (e: { verb: string; objectRef?: { name?: string; subresource?: string }; responseStatus?: { code: number } }) =>
    e.objectRef?.name === name && e.objectRef.subresource === 'status' && e.responseStatus?.code === 200;
  const evs = await eventsWhen(log, (all) => ['audit-node-csr', 'audit-client-csr'].every((n) => all.some(approval(n)) && all.some(issued(n))), 30_000);

  const nodeApproval = evs.find(approval('audit-node-csr'));
  expect(nodeApproval).toMatchObject({ level: 'RequestResponse', stage: 'ResponseComplete', user: { username: 'system:kube-identity-controller' }, responseStatus: { code: 200 } });
  // As kube-controller-manager's identity: in no group that bypasses RBAC, only what its role grants.
  expect(nodeApproval?.user.groups).toEqual(['system:authenticated']);
  // And as its clients do, each request names the program, its version, platform and commit, and the controller.
  const agent = (name: string): RegExp => new RegExp(`^kube-identity/v\\d+\\.\\d+\\.\\d+ \\([a-z0-9]+/[a-z0-9]+\\) kubernetes/([0-9a-f]{7}|unknown)/${name}$`);
  expect(nodeApproval?.userAgent).toMatch(agent('csrapproving'));
  expect(evs.find(issued('audit-node-csr'))?.userAgent).toMatch(agent('csrsigning-kubelet-client'));
  const all = await eventsWhen(log, (es) => es.some((e) => e.objectRef?.resource === 'leases' && e.user.username === 'system:kube-identity-controller'));
  const controllers = all.filter((e) => e.user.username === 'system:kube-identity-controller');
  expect(controllers.find((e) => e.verb === 'watch' && e.objectRef?.resource === 'certificatesigningrequests')?.userAgent).toMatch(agent('shared-informers'));
  expect(controllers.find((e) => e.objectRef?.resource === 'leases')?.userAgent).toMatch(agent('leader-election'));
  expect(controllers.filter((e) => !e.userAgent)).toEqual([]);
  expect(nodeApproval?.requestObject).toMatchObject({ status: { conditions: [expect.objectContaining({ type: 'Approved', status: 'True' })] } });
  const manual = evs.find(approval('audit-client-csr'));
  expect(manual).toMatchObject({ level: 'RequestResponse', user: { username: 'kubernetes-admin', groups: expect.arrayContaining(['system:masters']) } });
  expect(manual?.userAgent).toMatch(/^kubectl/);
  // The signer's write holds the issued certificate (public) in its response.
  expect(evs.find(issued('audit-client-csr'))).toMatchObject({ user: { username: 'system:kube-identity-controller' }, responseObject: { status: { certificate: expect.any(String) } } });
  // kubectl and the controller on a host that may be loaded.
}, 90_000);

it('never writes a minted or reviewed token, or a Secret\'s data, to the log', async () => {
  const log = path.join(dataDir, 'audit.log');
  await kubectl('create', 'serviceaccount', 'audit-sa', '-n', 'default');
  const token = (await kubectl('create', 'token', 'audit-sa', '-n', 'default')).trim();
  expect(token.split('.')).toHaveLength(3);
  const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } };
  const reviewFile = path.join(dataDir, 'review.json');
  (await import('node:fs')).writeFileSync(reviewFile, JSON.stringify(review));
  expect(JSON.parse(await kubectl('create', '-f', reviewFile, '-o', 'json'))).toMatchObject({ status: { authenticated: true } });
  const secret = `s3cret-${Math.random().toString(36).slice(2)}`;
  await kubectl('create', 'secret', 'generic', 'audit-secret', '-n', 'default', `--from-literal=password=${secret}`);
  await kubectl('get', 'secret', 'audit-secret', '-n', 'default', '-o', 'json');

  const minted = (e: { verb: string; objectRef?: { resource?: string; name?: string; subresource?: string } }): boolean =>
    e.verb === 'create' && e.objectRef?.resource === 'serviceaccounts' && e.objectRef.name === 'audit-sa' && e.objectRef.subresource === 'token';
  const read = (e: { verb: string; objectRef?: { resource?: string; name?: string } }): boolean => e.verb === 'get' && e.objectRef?.name === 'audit-secret';
  const evs = await eventsWhen(log, (all) => all.some(minted) && all.some(read) && all.some((e) => e.objectRef?.resource === 'tokenreviews'));
  const mint = evs.find(minted);
  expect(mint).toMatchObject({ level: 'Metadata', user: { username: 'kubernetes-admin' }, responseStatus: { code: 201 } });
  // The token is named by its JTI, which the token's own requests carry as their credential id.
  const jti = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')).jti as string;
  expect(mint?.annotations?.['authentication.kubernetes.io/issued-credential-id']).toBe(`JTI=${jti}`);
  await run('kubectl', ['--server', (await kubectl('config', 'view', '-o', 'jsonpath={.clusters[0].cluster.server}')).trim(), '--certificate-authority', path.join(dataDir, 'ca.crt'), '--token', token, 'auth', 'whoami'], { env: { ...env, KUBECONFIG: '/dev/null' } }).catch(() => undefined);
  const used = await eventsWhen(log, (all) => all.some((e) => e.user.extra?.['authentication.kubernetes.io/credential-id']?.includes(`JTI=${jti}`)));
  expect(used.find((e) => e.user.extra?.['authentication.kubernetes.io/credential-id']?.includes(`JTI=${jti}`))?.user.username).toBe('system:serviceaccount:default:audit-sa');
  const text = readFileSync(log, 'utf8');
  const credentials = [token, ...token.split('.'), secret, Buffer.from(secret).toString('base64')];
  for (const value of credentials) expect(text).not.toContain(value);
  // Nor up's own log; and the store keeps the Secret sealed with up's default key, as the banner says.
  const own = readFileSync(path.join(dataDir, 'kube-identity.log'), 'utf8');
  for (const value of credentials) expect(own).not.toContain(value);
  expect(up.field('encryption')).toBe(`Secrets encrypted at rest (secrets: secretbox, identity; key in ${path.join(dataDir, 'encryption-config.yaml')})`);
  const stored = Buffer.concat(['store.db', 'store.db-wal'].map((f) => path.join(dataDir, f)).filter(existsSync).map((f) => readFileSync(f)));
  expect(stored.includes('k8s:enc:secretbox:v1:')).toBe(true);
  for (const value of credentials.slice(-2)) expect(stored.includes(value)).toBe(false);
  // kubectl and the controller on a host that may be loaded.
}, 90_000);

it("leaves a node's Lease renewals out, and keeps its join, a CSR's create and a Secret read at their levels", async () => {
  const log = path.join(dataDir, 'audit.log');
  const { writeFileSync } = await import('node:fs');
  // A node's client certificate, as a kubelet gets one: requested, auto-approved by the controller, issued.
  const key = generateKeyPair().privateKeyPem;
  const request = await createCertificateRequestPem({ privateKeyPem: key, commonName: 'system:node:audit-beat', organizations: ['system:nodes'] });
  const csr = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'audit-beat-csr' }, spec: { request: Buffer.from(request).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } };
  writeFileSync(path.join(dataDir, 'beat-csr.json'), JSON.stringify(csr));
  await kubectl('create', '-f', path.join(dataDir, 'beat-csr.json'));
  let certificate = '';
  for (const deadline = Date.now() + 30_000; certificate === '' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    certificate = await kubectl('get', 'csr', 'audit-beat-csr', '-o', 'jsonpath={.status.certificate}');
  }
  writeFileSync(path.join(dataDir, 'beat.crt'), Buffer.from(certificate, 'base64'));
  writeFileSync(path.join(dataDir, 'beat.key'), key, { mode: 0o600 });
  const server = (await kubectl('config', 'view', '-o', 'jsonpath={.clusters[0].cluster.server}')).trim();
  const asNode = async (...args: string[]): Promise<string> =>
    (await run('kubectl', ['--server', server, '--certificate-authority', path.join(dataDir, 'ca.crt'), '--client-certificate', path.join(dataDir, 'beat.crt'), '--client-key', path.join(dataDir, 'beat.key'), ...args], { env: { ...env, KUBECONFIG: '/dev/null' } })).stdout;
  // The heartbeat: the Lease created once, then renewed (by update and by patch), as kubelet does every 10 s.
  const lease = (at: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'audit-beat', namespace: 'kube-node-lease' }, spec: { holderIdentity: 'audit-beat', leaseDurationSeconds: 40, renewTime: at } });
  writeFileSync(path.join(dataDir, 'lease.json'), JSON.stringify(lease('2026-01-01T00:00:00.000000Z')));
  await asNode('create', '-f', path.join(dataDir, 'lease.json'));
  writeFileSync(path.join(dataDir, 'lease.json'), JSON.stringify(lease('2026-01-01T00:00:10.000000Z')));
  await asNode('replace', '-f', path.join(dataDir, 'lease.json'));
  await asNode('patch', 'lease', 'audit-beat', '-n', 'kube-node-lease', '--type', 'merge', '-p', '{"spec":{"renewTime":"2026-01-01T00:00:20.000000Z"}}');
  expect(await asNode('get', 'lease', 'audit-beat', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}')).toBe('2026-01-01T00:00:20.000000Z');
  // Then a request that is recorded: once its event is in, every renewal before it was decided.
  await asNode('auth', 'whoami');
  const secret = `beat-${Math.random().toString(36).slice(2)}`;
  await kubectl('create', 'secret', 'generic', 'audit-beat-secret', '-n', 'default', `--from-literal=password=${secret}`);
  await kubectl('get', 'secret', 'audit-beat-secret', '-n', 'default', '-o', 'json');

  const byNode = (e: { user: { username?: string } }): boolean => e.user.username === 'system:node:audit-beat';
  const secretRead = (e: { verb: string; objectRef?: { name?: string } }): boolean => e.verb === 'get' && e.objectRef?.name === 'audit-beat-secret';
  const evs = await eventsWhen(log, (all) => all.some((e) => byNode(e) && e.objectRef?.resource === 'selfsubjectreviews') && all.some(secretRead));
  const leases = evs.filter((e) => byNode(e) && e.objectRef?.resource === 'leases');
  expect(leases.map((e) => [e.verb, e.level, e.responseStatus?.code])).toEqual([['create', 'Metadata', 201]]);
  const created = evs.find((e) => e.verb === 'create' && e.objectRef?.resource === 'certificatesigningrequests' && e.objectRef.name === 'audit-beat-csr');
  // The CSR as asked and as stored, with the identity the server recorded for its requester.
  expect(created).toMatchObject({ level: 'RequestResponse', user: { username: 'kubernetes-admin' }, requestObject: { spec: { request: expect.any(String) } }, responseObject: { spec: { username: 'kubernetes-admin' } } });
  const read = evs.find(secretRead);
  expect(read).toMatchObject({ level: 'Metadata', responseStatus: { code: 200 } });
  expect(read).not.toHaveProperty('responseObject');
  expect(read).not.toHaveProperty('requestObject');
  const text = readFileSync(log, 'utf8');
  for (const value of [secret, Buffer.from(secret).toString('base64')]) expect(text).not.toContain(value);
}, 90_000);

it("matches README's Run it: every banner line it shows is printed, and what up turns on reads as there", () => {
  const readme = readFileSync('README.md', 'utf8');
  const sample = readme.slice(readme.indexOf('kube-identity is up.'), readme.indexOf('```', readme.indexOf('kube-identity is up.')));
  const lines = sample.split('\n').slice(1).filter((l) => l.startsWith('  ') && !l.includes('...'));
  const shown = new Map(lines.map((l) => [l.slice(0, 15).trim(), l.slice(15)]));
  expect([...shown.keys()]).toEqual(expect.arrayContaining(['API server', 'kubeconfig', 'admin cert', 'encryption', 'audit log']));
  for (const label of shown.keys()) expect(up.field(label)).toBeTruthy();
  // The README's data directory is ./.kube-identity; this up's is dataDir.
  const here = (text: string): string => text.replaceAll('.kube-identity/', `${dataDir}/`);
  for (const label of ['encryption', 'audit log']) expect(up.field(label)).toBe(here(shown.get(label)!));
  expect(up.field('admin cert')).toMatch(/^valid until \d{4}-\d\d-\d\d \(renew: kube-identity kubeconfig admin --renew --data-dir .+\)$/);
});

describeWithTools(['jq'])("docs/audit.md's jq", () => {
  /** The jq filter of the docs' first command under `heading`, run on this up's log. */
  async function documented(heading: string, edit: (filter: string) => string = (f) => f): Promise<Record<string, unknown>[]> {
    const docs = readFileSync('docs/audit.md', 'utf8');
    const section = docs.slice(docs.indexOf(heading));
    const command = section.slice(section.indexOf('```sh\n') + 6, section.indexOf('\n```', section.indexOf('```sh\n')));
    const filter = command.slice(command.indexOf("jq -c '") + 7, command.lastIndexOf("' audit.log"));
    const { stdout } = await run('jq', ['-c', edit(filter), path.join(dataDir, 'audit.log')]);
    return stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  it('answers who approved each CSR and which tokens were minted for a ServiceAccount, as documented', async () => {
    const approvals = await documented('### Who approved CSR X');
    expect(approvals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ csr: 'audit-client-csr', by: 'kubernetes-admin', code: 200, condition: { type: 'Approved', reason: 'KubectlApprove' } }),
        expect.objectContaining({ csr: 'audit-node-csr', by: 'system:kube-identity-controller', code: 200, condition: { type: 'Approved', reason: 'AutoApproved' } }),
      ]),
    );
    const minted = await documented('### Which tokens were minted for ServiceAccount Y', (f) => f.replace('"builder"', '"audit-sa"'));
    expect(minted).toEqual([expect.objectContaining({ by: 'kubernetes-admin', code: 201, token: expect.stringMatching(/^JTI=[0-9a-f-]{36}$/) })]);
  });
});
