/**
 * A data directory's credentials on later starts (src/apiserver/server/credentials.ts): a start whose
 * CA or service-account key was lost refuses, writing nothing, instead of making a new one; an admin
 * pair read while `kubeconfig admin --renew` replaces it is read again holding the lock.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSigningKey } from '../../src/apiserver/authentication/sa-keys.js';
import {
  CREDENTIAL_FILES,
  CredentialsLostError,
  ensureCredentials,
  renewAdminCredentials,
  writeKubeconfig,
  type ServerCredentials,
} from '../../src/apiserver/server/credentials.js';
import { withCredentialsLock } from '../../src/apiserver/server/credentials-lock.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { runCli } from '../helpers/cli.js';

type Field = keyof typeof CREDENTIAL_FILES;

let dir: string;
let first: ServerCredentials;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'credentials-'));
  first = await ensureCredentials(dir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const file = (f: Field): string => path.join(dir, CREDENTIAL_FILES[f]);
const contents = (): Record<string, string> => Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(path.join(dir, name), 'utf8')]));
const caIssued = ['apiserver.crt', 'apiserver.key', 'admin.crt', 'admin.key'];

async function lostError(): Promise<CredentialsLostError> {
  const err: unknown = await ensureCredentials(dir).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof CredentialsLostError)) throw new Error(`expected a CredentialsLostError, got ${String(err)}`);
  return err;
}

describe('a lost CA or service-account key', () => {
  it.each<[string, 'removed' | 'emptied', Field[], string[]]>([
    ['ca.key', 'removed', ['caKeyPem'], ['ca.crt', ...caIssued]],
    ['ca.crt', 'removed', ['caPem'], ['ca.key', ...caIssued]],
    ['ca.crt and ca.key', 'removed', ['caPem', 'caKeyPem'], caIssued],
    ['ca.key', 'emptied', ['caKeyPem'], ['ca.crt', ...caIssued]],
    ['kubelet-serving-ca.key', 'removed', ['kubeletServingCaKeyPem'], ['kubelet-serving-ca.crt']],
    ['workload-ca.crt', 'removed', ['workloadCaPem'], ['workload-ca.key']],
    ['sa.key', 'removed', ['serviceAccountKeyPem'], ['ca.crt']],
  ])('refuses to start without %s (%s), naming it and what shows it was in use, and changes nothing', async (_name, how, lost, present) => {
    for (const f of lost) {
      if (how === 'removed') rmSync(file(f));
      else writeFileSync(file(f), '');
    }
    const before = contents();
    const err = await lostError();
    const missing = lost.map((f) => CREDENTIAL_FILES[f]);
    expect({ dir: err.dir, missing: err.missing, present: err.present }).toEqual({ dir, missing, present });
    expect(err.message).toContain(`Restore ${missing.join(' and ')} from a backup`);
    expect(contents()).toEqual(before);
  });

  it('starts a new cluster identity once the files the error names are removed, keeping the service-account key', async () => {
    rmSync(file('caKeyPem'));
    const err = await lostError();
    expect(err.message).toContain(`to start a new cluster identity, remove ${err.present.join(', ')}`);
    for (const name of err.present) rmSync(path.join(dir, name));
    const made = await ensureCredentials(dir);
    expect(made.caPem).not.toBe(first.caPem);
    const ca = new X509Certificate(made.caPem);
    for (const [cert, key] of [
      [made.servingCertPem, made.servingKeyPem],
      [made.adminCertPem, made.adminKeyPem],
    ] as const) {
      expect(new X509Certificate(cert).verify(ca.publicKey)).toBe(true);
      expect(new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))).toBe(true);
    }
    expect([made.serviceAccountKeyPem, made.kubeletServingCaPem, made.workloadCaPem]).toEqual([first.serviceAccountKeyPem, first.kubeletServingCaPem, first.workloadCaPem]);
  });

  it('takes the new service-account key the error says how to write', async () => {
    rmSync(file('serviceAccountKeyPem'));
    const command = /\((openssl [^)]+)\)/.exec((await lostError()).message)?.[1];
    expect(command).toContain(file('serviceAccountKeyPem'));
    const [program, ...args] = command!.split(' ');
    execFileSync(program!, args, { stdio: 'ignore' });
    const made = await ensureCredentials(dir);
    expect(made.serviceAccountKeyPem).toBe(readFileSync(file('serviceAccountKeyPem'), 'utf8'));
    expect(made.serviceAccountKeyPem).not.toBe(first.serviceAccountKeyPem);
    expect(loadSigningKey(made.serviceAccountKeyPem).alg).toBe('ES256');
    expect(made.caPem).toBe(first.caPem);
  });

  it('makes a CA missing whole when nothing it issued is there (a directory of an older release)', async () => {
    for (const f of ['kubeletServingCaPem', 'kubeletServingCaKeyPem', 'workloadCaPem', 'workloadCaKeyPem'] as const) rmSync(file(f));
    const made = await ensureCredentials(dir);
    expect(made.kubeletServingCaPem).not.toBe(first.kubeletServingCaPem);
    expect(made.workloadCaPem).not.toBe(first.workloadCaPem);
    expect({ ...made, kubeletServingCaPem: '', kubeletServingCaKeyPem: '', workloadCaPem: '', workloadCaKeyPem: '' }).toEqual({
      ...first,
      kubeletServingCaPem: '',
      kubeletServingCaKeyPem: '',
      workloadCaPem: '',
      workloadCaKeyPem: '',
    });
  });

  it('refuses to renew the admin certificate from a lost CA', async () => {
    writeKubeconfig(dir, 'https://127.0.0.1:6443', first);
    rmSync(file('caKeyPem'));
    await expect(renewAdminCredentials(dir)).rejects.toThrow(CredentialsLostError);
    expect(readFileSync(file('adminCertPem'), 'utf8')).toBe(first.adminCertPem);
  });

  it('makes `kube-identity apiserver` exit 1 with the message, leaving the directory as it was', async () => {
    rmSync(file('caKeyPem'));
    const before = contents();
    const r = await runCli(['apiserver', '--data-dir', dir, '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`kube-identity: data directory ${dir} has ca.crt, apiserver.crt, apiserver.key, admin.crt, admin.key but no ca.key: refusing`);
    expect(contents()).toEqual(before);
  }, 60_000);
});

describe('an admin pair that does not match', () => {
  /** A new admin pair from the directory's CA, as `kubeconfig admin --renew` makes it. */
  async function newAdminPair(): Promise<{ certPem: string; keyPem: string }> {
    const key = generateKeyPair();
    const now = Date.now();
    const certPem = await issueCertificate(
      { certPem: first.caPem, keyPem: first.caKeyPem },
      { subject: { commonName: 'kubernetes-admin', organizations: ['system:masters'] }, publicKeyPem: key.publicKeyPem, usages: ['client auth'], notBefore: new Date(now), notAfter: new Date(now + 3_600_000) },
    );
    return { certPem, keyPem: key.privateKeyPem };
  }

  it('is read again holding the lock while a renewal has replaced the key but not yet the certificate', async () => {
    const renewed = await newAdminPair();
    let reading: Promise<{ credentials: ServerCredentials; certReplaced: boolean }> | undefined;
    let certReplaced = false;
    await withCredentialsLock(dir, async () => {
      writeFileSync(file('adminKeyPem'), renewed.keyPem);
      reading = ensureCredentials(dir).then((credentials) => ({ credentials, certReplaced }));
      // Time for a reader that did not wait to come back with the mismatched pair.
      await new Promise((resolve) => setTimeout(resolve, 300));
      writeFileSync(file('adminCertPem'), renewed.certPem);
      certReplaced = true;
    });
    const read = await reading!;
    expect(read.certReplaced).toBe(true);
    expect([read.credentials.adminCertPem, read.credentials.adminKeyPem]).toEqual([renewed.certPem, renewed.keyPem]);
    expect(read.credentials.caPem).toBe(first.caPem);
  });

  it('left by a renewal that died between its two writes is issued again by the CA', async () => {
    writeFileSync(file('adminKeyPem'), (await newAdminPair()).keyPem);
    const made = await ensureCredentials(dir);
    const cert = new X509Certificate(made.adminCertPem);
    expect(cert.checkPrivateKey(createPrivateKey(made.adminKeyPem))).toBe(true);
    expect(cert.verify(new X509Certificate(first.caPem).publicKey)).toBe(true);
    expect(cert.subject).toBe('O=system:masters\nCN=kubernetes-admin');
    expect([readFileSync(file('adminCertPem'), 'utf8'), readFileSync(file('adminKeyPem'), 'utf8')]).toEqual([made.adminCertPem, made.adminKeyPem]);
    expect({ ...made, adminCertPem: '', adminKeyPem: '' }).toEqual({ ...first, adminCertPem: '', adminKeyPem: '' });
  });
});
