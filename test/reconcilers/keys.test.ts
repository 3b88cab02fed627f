/**
 * Keys, against the real server and controller with requests made by openssl (issue #24,
 * reproduction 3): what Go's x509.ParseCertificateRequest refuses is a 422 with Go's text at
 * create, whoever asks and for whichever signer; what Go parses but the signers' key policy refuses
 * (RSA below --signer-min-rsa-bits, P-224, P-521) is approved as usual and then marked Failed with
 * the reason, never signed and never left pending.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { CertificateSigningRequest } from '../../src/api/certificates.js';
import { approve, getCsr, startController, startHarness, waitFor, type Harness, type RunningController, type Who } from './harness.js';

const BASE = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';
const KUBELET_SERVING = 'kubernetes.io/kubelet-serving';

let h: Harness;
let dir: string;

/** A PKCS#10 request made by openssl for a key made by `genpkey` with these options. */
function opensslCsr(name: string, genpkey: string[], subject: string, san?: string): string {
  const key = path.join(dir, `${name}.key`);
  const req = path.join(dir, `${name}.csr`);
  execFileSync('openssl', ['genpkey', ...genpkey, '-out', key], { stdio: 'ignore' });
  execFileSync('openssl', ['req', '-new', '-key', key, '-subj', subject, ...(san ? ['-addext', `subjectAltName=${san}`] : []), '-out', req], { stdio: 'ignore' });
  return readFileSync(req, 'latin1');
}

const EC = (curve: string, explicit = false): string[] => ['-algorithm', 'EC', '-pkeyopt', `ec_paramgen_curve:${curve}`, ...(explicit ? ['-pkeyopt', 'ec_param_enc:explicit'] : [])];
const RSA = (bits: number): string[] => ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${bits}`];

async function create(who: Who, name: string, pem: string, signerName: string, usages: string[]): Promise<{ status: number; body: Record<string, unknown> }> {
  return h.call(who, 'POST', BASE, { metadata: { name }, spec: { request: Buffer.from(pem, 'latin1').toString('base64'), signerName, usages } });
}

const KUBELET = { who: 'bootstrap' as const, subject: '/O=system:nodes/CN=system:node:w-keys', signer: KUBELET_CLIENT, usages: ['digital signature', 'client auth'] };
const USER = { who: 'alice' as const, subject: '/CN=alice', signer: APISERVER_CLIENT, usages: ['digital signature', 'client auth'] };
const SERVING = { who: 'node9' as const, subject: '/O=system:nodes/CN=system:node:worker-9', signer: KUBELET_SERVING, usages: ['digital signature', 'server auth'], san: 'DNS:worker-9' };

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kid-keys-'));
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('create refuses what Go cannot parse, with 422 and Go\'s text', () => {
  const cases: [string, string[], typeof KUBELET | typeof USER | typeof SERVING, string][] = [
    ['secp256k1, kubelet client CSR from a join token', EC('secp256k1'), KUBELET, 'x509: unsupported elliptic curve'],
    ['brainpoolP256r1, kube-apiserver-client CSR', EC('brainpoolP256r1'), USER, 'x509: unsupported elliptic curve'],
    ['brainpoolP384r1, kubelet serving CSR', EC('brainpoolP384r1'), SERVING, 'x509: unsupported elliptic curve'],
    ['P-256 with explicit curve parameters (CurveBall), kubelet client CSR', EC('P-256', true), KUBELET, 'x509: invalid ECDSA parameters'],
    ['P-256 with explicit curve parameters (CurveBall), kube-apiserver-client CSR', EC('P-256', true), USER, 'x509: invalid ECDSA parameters'],
  ];
  it.each(cases)('%s', async (what, genpkey, as, text) => {
    const name = `bad-key-${cases.findIndex((c) => c[0] === what)}`;
    const pem = opensslCsr(name, genpkey, as.subject, 'san' in as ? as.san : undefined);
    const res = await create(as.who, name, pem, as.signer, as.usages);
    expect(res.status).toBe(422);
    expect(res.body.reason).toBe('Invalid');
    expect(String(res.body.message)).toMatch(new RegExp(`^CertificateSigningRequest\\.certificates\\.k8s\\.io "${name}" is invalid: spec\\.request: Invalid value: \\[\\]byte\\{0x2d, .*\\}: ${text.replace(/\./g, '\\.')}$`));
    expect((await h.call('admin', 'GET', `${BASE}/${name}`)).status).toBe(404);
  });

  it('accepts what Go parses: P-224, P-521, RSA 1024, Ed25519 (the signer decides about those)', async () => {
    for (const [i, genpkey] of [EC('P-224'), EC('P-521'), RSA(1024), ['-algorithm', 'ED25519']].entries()) {
      const name = `go-parses-${i}`;
      const res = await create('alice', name, opensslCsr(name, genpkey, USER.subject), USER.signer, USER.usages);
      expect([name, res.status]).toEqual([name, 201]);
      await h.call('admin', 'DELETE', `${BASE}/${name}`);
    }
  });
});

describe('the signers\' key policy: approved requests with refused keys become Failed', () => {
  let ctl: RunningController;
  beforeAll(async () => {
    ctl = await startController(h, { clusterSigningCertFile: h.caFiles.certFile, clusterSigningKeyFile: h.caFiles.keyFile });
  });
  afterAll(async () => ctl?.stop());

  const settled = (name: string): Promise<CertificateSigningRequest> =>
    waitFor(`${name} issued or failed`, async () => {
      const c = await getCsr(h, name);
      return c.status?.certificate || c.status?.conditions?.some((x) => x.type === 'Failed') ? c : undefined;
    });

  const refused: [string, string[], string][] = [
    ['RSA 1024', RSA(1024), 'key policy: RSA key of 1024 bits is below the minimum of 2048'],
    ['P-224', EC('P-224'), 'key policy: ECDSA curve P-224 is not allowed (allowed: P-256, P-384, Ed25519)'],
    ['P-521', EC('P-521'), 'key policy: ECDSA curve P-521 is not allowed (allowed: P-256, P-384, Ed25519)'],
  ];
  it.each(refused)('%s: Failed with the reason, an Event and a failure metric', async (what, genpkey, reason) => {
    const name = `policy-${what.replace(/\W+/g, '').toLowerCase()}`;
    expect((await create('alice', name, opensslCsr(name, genpkey, USER.subject), USER.signer, USER.usages)).status).toBe(201);
    await approve(h, name);
    const csr = await settled(name);
    expect(csr.status?.certificate).toBeUndefined();
    expect(csr.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({ status: 'True', reason: 'SignerValidationFailure', message: reason });
    // The Event is written on its own, after the status (the recorder's queue).
    const events = await waitFor(`${name}'s Event`, async () => {
      const list = await ctl.client.api(CoreV1Api).listNamespacedEvent({ namespace: 'default' });
      const mine = list.items.filter((e) => e.involvedObject.name === name);
      return mine.length > 0 ? mine : undefined;
    });
    expect(events.map((e) => [e.type, e.reason, e.message])).toContainEqual(['Warning', 'SignerValidationFailure', reason]);
    expect(await ctl.registry.getSingleMetricAsString('kube_identity_csr_failures_total')).toMatch(/signer="kubernetes.io\/kube-apiserver-client",reason="key-policy"\} [1-9]/);
  });

  it.each([
    ['RSA 2048', RSA(2048)],
    ['P-384', EC('P-384')],
    ['Ed25519', ['-algorithm', 'ED25519']],
  ])('%s is signed', async (what, genpkey) => {
    const name = `policy-ok-${what.replace(/\W+/g, '').toLowerCase()}`;
    expect((await create('alice', name, opensslCsr(name, genpkey, USER.subject), USER.signer, USER.usages)).status).toBe(201);
    await approve(h, name);
    const csr = await settled(name);
    const cert = Buffer.from(csr.status?.certificate ?? '', 'base64').toString('latin1');
    // openssl parses what was issued and it carries the requested key.
    const issued = path.join(dir, `${name}.crt`);
    writeFileSync(issued, cert);
    const keyOfCert = execFileSync('openssl', ['x509', '-in', issued, '-noout', '-pubkey'], { encoding: 'utf8' });
    const keyOfCsr = execFileSync('openssl', ['req', '-in', path.join(dir, `${name}.csr`), '-noout', '-pubkey'], { encoding: 'utf8' });
    expect(keyOfCert).toBe(keyOfCsr);
  });
});
