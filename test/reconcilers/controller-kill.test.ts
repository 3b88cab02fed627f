/**
 * Crash safety of issuance through the real program: a `kube-identity controller` child process is
 * SIGKILLed while it is approving and signing kubelet client CSRs, a second one is started, and a
 * watch opened before either proves that no CSR ever carried two different certificates.
 */
import 'reflect-metadata';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { CertificateSigningRequest } from '../../src/api/certificates.js';
import { parseCertificatePem } from '../../src/pki/certificate.js';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { kill9 } from '../helpers/cli.js';
import { openWatch, raw, type WatchStream } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from './harness.js';

const ROOT = process.cwd();
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
/** CSRs waiting when the first controller starts, how many it must issue before the kill, and CSRs created after it. */
const BEFORE = 30;
const KILL_AFTER = 5;
const AFTER = 10;

let server: TestServer;
let watch: WatchStream;
const children: ChildProcess[] = [];
const exits: string[] = [];

/** Starts `kube-identity controller` from the TypeScript sources, signing with the server's CA. */
function startController(): ChildProcess {
  const args = [
    ...['--import', path.join(ROOT, 'test/helpers/register-ts.mjs'), path.join(ROOT, 'src/cmd/main.ts'), 'controller'],
    ...['--kubeconfig', server.kubeconfigPath, '--leader-elect=false', '--metrics-bind-address', '127.0.0.1:0'],
    ...['--cluster-signing-cert-file', path.join(server.dataDir, 'ca.crt'), '--cluster-signing-key-file', path.join(server.dataDir, 'ca.key')],
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  child.once('exit', (code, signal) => {
    if (signal !== 'SIGKILL') exits.push(`controller exited (${String(code ?? signal)}): ${stderr}`);
  });
  children.push(child);
  return child;
}

/** Waits until `n` CSRs carry a certificate, failing at once if a controller died on its own. */
function waitForCertificates(n: number): Promise<true> {
  return waitFor(`${n} certificates`, async () => {
    if (exits.length > 0) throw new Error(exits.join('\n'));
    return certificatesSeen().size >= n ? true : undefined;
  }, 30_000);
}

/** A kubelet client CSR created by the admin, which the approver may approve through the nodeclient SAR. */
async function createNodeCsr(name: string): Promise<void> {
  const { privateKeyPem } = generateKeyPair('ECDSA-P256');
  const pem = await createCertificateRequestPem({ privateKeyPem, commonName: `system:node:${name}`, organizations: ['system:nodes'] });
  const spec = { request: Buffer.from(pem).toString('base64'), signerName: SIGNER, usages: ['digital signature', 'client auth'] };
  const res = await raw(server, 'POST', CSRS, { body: { metadata: { name }, spec } });
  if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`);
}

/** Every distinct non-empty status.certificate each CSR carried, over every watch event so far. */
function certificatesSeen(): Map<string, Set<string>> {
  const seen = new Map<string, Set<string>>();
  for (const e of watch.events as { type: string; object: CertificateSigningRequest }[]) {
    const cert = e.object.status?.certificate;
    if (!cert) continue;
    const name = e.object.metadata?.name ?? '';
    seen.set(name, (seen.get(name) ?? new Set<string>()).add(cert));
  }
  return seen;
}

beforeAll(async () => {
  server = await startTestServer();
  watch = await openWatch(server, `${CSRS}?watch=true`);
});

afterAll(async () => {
  for (const c of children) await kill9(c);
  watch?.close();
  await server?.close();
});

it('a controller SIGKILLed mid-issuance and restarted never issues a second certificate for a CSR', async () => {
  const names = Array.from({ length: BEFORE + AFTER }, (_, i) => `node-${i}`);
  for (const name of names.slice(0, BEFORE)) await createNodeCsr(name);

  const first = startController();
  await waitForCertificates(KILL_AFTER);
  await kill9(first);
  // Created while no controller runs, so the restarted one always has work of its own.
  for (const name of names.slice(BEFORE)) await createNodeCsr(name);

  const second = startController();
  await waitForCertificates(names.length);
  await kill9(second);
  // No controller writes any more: once the watch has delivered each CSR's final write, it has seen them all.
  const list = (await raw(server, 'GET', CSRS)).json as { items: CertificateSigningRequest[] };
  const csrs = list.items.filter((c) => names.includes(c.metadata?.name ?? ''));
  expect(csrs).toHaveLength(names.length);
  const finalWrites = new Set(csrs.map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`));
  await waitFor('the watch to catch up', async () => {
    const delivered = new Set((watch.events as { object: CertificateSigningRequest }[]).map((e) => `${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}`));
    return [...finalWrites].every((w) => delivered.has(w)) ? true : undefined;
  });

  const seen = certificatesSeen();
  expect([...seen.keys()].sort()).toEqual([...names].sort());
  for (const name of names) expect({ name, certificates: seen.get(name)?.size }).toEqual({ name, certificates: 1 });

  const ca = parseCertificatePem(server.caPem)[0];
  if (!ca) throw new Error('no CA certificate');
  for (const csr of csrs) {
    const name = csr.metadata?.name ?? '';
    const value = csr.status?.certificate ?? '';
    expect([...(seen.get(name) ?? [])]).toEqual([value]);
    // Approved exactly once, by the auto-approver, and never marked Failed.
    expect((csr.status?.conditions ?? []).map((c) => `${c.type}/${c.reason}`)).toEqual(['Approved/AutoApproved']);
    const certs = parseCertificatePem(Buffer.from(value, 'base64').toString('latin1'));
    expect(certs).toHaveLength(1);
    const cert = certs[0];
    if (!cert) throw new Error(`no certificate for ${name}`);
    expect(cert.subject).toBe(`O=system:nodes, CN=system:node:${name}`);
    expect(cert.issuer).toBe(ca.subject);
    expect(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
  }
}, 80_000);
