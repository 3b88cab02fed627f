/**
 * Issue #24, reproductions 1 and 2, as an attacker with a kubeadm join token would try them against
 * `kube-identity up` with its defaults (the real CLI, port 0): the join token gets a node named
 * `kubernetes`, that node claims the API server's names and the kubernetes Service IP in its own
 * status and asks for serving certificates naming them. The serving policy leaves them pending, and
 * even one an admin approves by hand is signed by the kubelet-serving CA, which neither
 * kube-root-ca.crt nor the API server's client CA holds: a TLS client verifying with
 * kube-root-ca.crt refuses it as kubernetes.default.svc, and the API server refuses it as a client.
 * Then a data directory from an older release (no kubelet-serving CA) gets one on its next start.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'node:tls';
import type { CertificateSigningRequest } from '../../src/api/certificates.js';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { startUpChild, type UpChild } from '../helpers/cli.js';
import { raw, type RawTarget } from '../helpers/http.js';
import { waitFor as poll } from '../helpers/wait.js';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const TOKEN = 'k7q2zx.0123456789abcdef';

let dataDir: string;
let up: UpChild;
let target: RawTarget;

async function startUp(): Promise<void> {
  up = await startUpChild(['--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0']);
  target = { url: up.field('API server'), caPem: readFileSync(path.join(dataDir, 'ca.crt'), 'utf8'), admin: { certPem: readFileSync(path.join(dataDir, 'admin.crt'), 'utf8'), keyPem: readFileSync(path.join(dataDir, 'admin.key'), 'utf8') } };
}

async function stopUp(): Promise<void> {
  if (up.child.exitCode !== null) return;
  const exited = new Promise((r) => up.child.once('exit', r));
  up.child.kill('SIGTERM');
  await exited;
}

type Who = { token: string } | { client: { certPem: string; keyPem: string } } | Record<string, never>;

async function call(who: Who, method: string, urlPath: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await raw(target, method, urlPath, { body, ...who });
  return { status: res.status, json: (res.json ?? {}) as Record<string, unknown> };
}

/** The shared poll, with this suite's 20 s budget (servers started from source under load). */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => poll(what, probe, 20_000);

const getCsr = async (name: string): Promise<CertificateSigningRequest> => (await call({}, 'GET', `${CSRS}/${name}`)).json as unknown as CertificateSigningRequest;
const certOf = (csr: CertificateSigningRequest): string => Buffer.from(csr.status?.certificate ?? '', 'base64').toString('latin1');
const issued = (name: string): Promise<CertificateSigningRequest> =>
  waitFor(`${name} issued`, async () => {
    const c = await getCsr(name);
    return c.status?.certificate ? c : undefined;
  });

/** A CSR as `who`; returns the key. */
async function request(who: Who, name: string, signerName: string, usages: string[], subject: { cn: string; dns?: string[]; ips?: string[] }): Promise<string> {
  const { privateKeyPem } = generateKeyPair('ECDSA-P256');
  const pem = await createCertificateRequestPem({ privateKeyPem, commonName: subject.cn, organizations: ['system:nodes'], dnsNames: subject.dns, ipAddresses: subject.ips });
  const res = await call(who, 'POST', CSRS, { metadata: { name }, spec: { request: Buffer.from(pem).toString('base64'), signerName, usages } });
  if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${JSON.stringify(res.json)}`);
  return privateKeyPem;
}

/** What the join token makes of itself: a node client certificate, auto-approved and issued. */
async function joinAs(node: string): Promise<{ certPem: string; keyPem: string }> {
  const keyPem = await request({ token: TOKEN }, `join-${node}`, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth'], { cn: `system:node:${node}` });
  return { certPem: certOf(await issued(`join-${node}`)), keyPem };
}

async function registerNode(client: { certPem: string; keyPem: string }, name: string, addresses: { type: string; address: string }[]): Promise<void> {
  const created = await call({ client }, 'POST', '/api/v1/nodes', { metadata: { name } });
  expect(created.status).toBe(201);
  const status = await call({ client }, 'PUT', `/api/v1/nodes/${name}/status`, { ...created.json, status: { addresses } });
  expect(status.status).toBe(200);
}

async function policyViolation(name: string): Promise<string> {
  return waitFor(`PolicyViolation event on ${name}`, async () => {
    const events = await call({}, 'GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`);
    const items = (events.json.items ?? []) as { reason?: string; message?: string }[];
    return items.find((e) => e.reason === 'PolicyViolation')?.message;
  });
}

/** Serves TLS with `cert` and connects as a client trusting only `caPem`, for `servername`. Resolves to the verification error, or undefined. */
async function tlsVerify(cert: { certPem: string; keyPem: string }, caPem: string, servername: string): Promise<string | undefined> {
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (_q, s) => s.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    return await new Promise<string | undefined>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, ca: caPem, rejectUnauthorized: true }, () => {
        socket.end();
        resolve(undefined);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

async function approveByHand(name: string): Promise<void> {
  const csr = await getCsr(name);
  const conditions = [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'This CSR was approved by kubectl certificate approve.' }];
  const res = await call({}, 'PUT', `${CSRS}/${name}/approval`, { ...csr, status: { conditions } });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kid-trust-'));
  await startUp();
  const [id, secret] = TOKEN.split('.') as [string, string];
  const res = await call({}, 'POST', '/api/v1/namespaces/kube-system/secrets', {
    metadata: { name: `bootstrap-token-${id}` },
    type: 'bootstrap.kubernetes.io/token',
    stringData: { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token' },
  });
  expect(res.status).toBe(201);
}, 90_000);

afterAll(async () => {
  if (up) await stopUp();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('reproduction 1: a join token never yields the API server\'s identity', () => {
  let node: { certPem: string; keyPem: string };
  let repro1Key = '';
  beforeAll(async () => {
    node = await joinAs('kubernetes');
    await registerNode(node, 'kubernetes', [
      { type: 'InternalIP', address: '10.0.0.20' },
      { type: 'Hostname', address: 'kubernetes' },
      { type: 'InternalDNS', address: 'kubernetes.default.svc' },
      { type: 'InternalDNS', address: 'kubernetes.default.svc.cluster.local' },
    ]);
  }, 60_000);

  it('the serving policy leaves a CSR for kubernetes.default.svc pending', async () => {
    repro1Key = await request({ client: node }, 'repro1', 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth'], {
      cn: 'system:node:kubernetes',
      dns: ['kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    });
    expect(await policyViolation('repro1')).toBe('Left pending: kubelet serving policy: apiserver-name: DNS name "kubernetes.default.svc" is the API server\'s in-cluster name');
    expect((await getCsr('repro1')).status?.conditions ?? []).toEqual([]);
  });

  it('approved by hand, it is signed by the kubelet-serving CA: kube-root-ca.crt refuses it as the API server, and the API server refuses it as a client', async () => {
    await approveByHand('repro1');
    const serving = { certPem: certOf(await issued('repro1')), keyPem: repro1Key };

    const rootCa = await call({}, 'GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
    const rootCaPem = String((rootCa.json.data as Record<string, string>)['ca.crt']);
    expect(rootCaPem).toBe(readFileSync(path.join(dataDir, 'ca.crt'), 'utf8'));
    // What every in-cluster client does with kube-root-ca.crt: the connection fails.
    expect(await tlsVerify(serving, rootCaPem, 'kubernetes.default.svc')).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    // The certificate is good for the name; it is only in another trust domain.
    const servingCaPem = readFileSync(path.join(dataDir, 'kubelet-serving-ca.crt'), 'utf8');
    expect(await tlsVerify(serving, servingCaPem, 'kubernetes.default.svc')).toBeUndefined();
    const bundle = await call({}, 'GET', '/api/v1/namespaces/kube-system/configmaps/kube-identity-trust-bundle');
    expect((bundle.json.data as Record<string, string>)['kubernetes.io_kubelet-serving.crt']).toBe(servingCaPem);
    expect(rootCaPem).not.toContain(servingCaPem.split('\n')[1]);
    // openssl agrees: the serving certificate does not chain to the cluster CA.
    const certFile = path.join(dataDir, '..', `${path.basename(dataDir)}-repro1.crt`);
    writeFileSync(certFile, serving.certPem);
    const verify = (ca: string): string => {
      try {
        return execFileSync('openssl', ['verify', '-CAfile', ca, certFile], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        return String((err as { stdout?: string }).stdout ?? '') + String((err as { stderr?: string }).stderr ?? '');
      }
    };
    expect(verify(path.join(dataDir, 'ca.crt'))).toMatch(/unable to get local issuer certificate/);
    expect(verify(path.join(dataDir, 'kubelet-serving-ca.crt'))).toMatch(/: OK/);
    rmSync(certFile);
    // As a client certificate (CN=system:node:kubernetes, O=system:nodes) it authenticates nobody.
    expect((await call({ client: serving }, 'GET', '/api/v1/nodes/kubernetes')).status).toBe(401);
    // While the node's client certificate, from the client signer, does.
    expect((await call({ client: node }, 'GET', '/api/v1/nodes/kubernetes')).status).toBe(200);
  });
});

describe('reproduction 2: the kubernetes Service IP', () => {
  it('a node that patched 10.96.0.1 into its own status is left pending', async () => {
    const node = await joinAs('w1');
    await registerNode(node, 'w1', [
      { type: 'InternalIP', address: '10.0.0.21' },
      { type: 'InternalIP', address: '10.96.0.1' },
      { type: 'Hostname', address: 'w1' },
    ]);
    await request({ client: node }, 'repro2', 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth'], { cn: 'system:node:w1', dns: ['w1'], ips: ['10.96.0.1'] });
    expect(await policyViolation('repro2')).toBe('Left pending: kubelet serving policy: service-ip: IP address "10.96.0.1" is inside the Service range');
    expect((await getCsr('repro2')).status?.conditions ?? []).toEqual([]);
    // Its own name and address are still fine.
    await request({ client: node }, 'repro2-ok', 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth'], { cn: 'system:node:w1', dns: ['w1'], ips: ['10.0.0.21'] });
    expect((await issued('repro2-ok')).status?.conditions?.[0]?.reason).toBe('AutoApproved');
  });
});

describe('a data directory from an older release', () => {
  it('gets its kubelet-serving CA on the next start, and keeps its cluster CA', async () => {
    await stopUp();
    const caBefore = readFileSync(path.join(dataDir, 'ca.crt'), 'utf8');
    const servingBefore = readFileSync(path.join(dataDir, 'kubelet-serving-ca.crt'), 'utf8');
    // As an older release left it: no kubelet-serving CA.
    rmSync(path.join(dataDir, 'kubelet-serving-ca.crt'));
    rmSync(path.join(dataDir, 'kubelet-serving-ca.key'));
    await startUp();
    expect(readFileSync(path.join(dataDir, 'ca.crt'), 'utf8')).toBe(caBefore);
    const servingAfter = readFileSync(path.join(dataDir, 'kubelet-serving-ca.crt'), 'utf8');
    expect(servingAfter).not.toBe(servingBefore);
    expect(existsSync(path.join(dataDir, 'kubelet-serving-ca.key'))).toBe(true);
    expect((statSync(path.join(dataDir, 'kubelet-serving-ca.key')).mode & 0o777).toString(8)).toBe('600');
    // The nodes' client certificates still log in, and new serving certificates come from the new CA.
    const node = await joinAs('w2');
    await registerNode(node, 'w2', [{ type: 'InternalIP', address: '10.0.0.22' }, { type: 'Hostname', address: 'w2' }]);
    const keyPem = await request({ client: node }, 'after-upgrade', 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth'], { cn: 'system:node:w2', dns: ['w2'] });
    const cert = { certPem: certOf(await issued('after-upgrade')), keyPem };
    expect(await tlsVerify(cert, servingAfter, 'w2')).toBeUndefined();
    expect(await tlsVerify(cert, caBefore, 'w2')).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  }, 90_000);
});
