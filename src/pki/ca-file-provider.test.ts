import 'reflect-metadata';
import { jest } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import { CaFileProvider, createCertificateAuthority, type CaMaterial, type CaReloadEvent } from './ca.js';
import { PkiError } from './errors.js';
import { issueCertificate } from './issue.js';
import { generateKeyPair } from './keys.js';

let dir: string;
let certFile: string;
let keyFile: string;
const cas: CaMaterial[] = [];
const leaf = generateKeyPair();

beforeAll(async () => {
  // Distinct CN lengths make every rewrite change the file size, whatever the timestamp granularity.
  for (const cn of ['ca-a', 'ca-bb', 'ca-ccc', 'ca-dddd']) cas.push(await createCertificateAuthority({ commonName: cn }));
});
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pki-cafile-'));
  certFile = path.join(dir, 'ca.crt');
  keyFile = path.join(dir, 'ca.key');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const write = (cert: string, key: string): void => {
  fs.writeFileSync(certFile, cert);
  fs.writeFileSync(keyFile, key);
};

async function issuerOf(p: CaFileProvider): Promise<string> {
  const pem = await issueCertificate(p, { subject: { commonName: 'x' }, publicKeyPem: leaf.publicKeyPem, usages: ['client auth'], notBefore: new Date(), notAfter: new Date(Date.now() + 3_600_000) });
  return new x509.X509Certificate(pem).issuer;
}

describe('CaFileProvider', () => {
  it('fails to start on missing names, empty files or a mismatched pair, with upstream texts', () => {
    expect(() => new CaFileProvider({ certFile: '', keyFile: 'k' })).toThrow(new PkiError('missing filename for serving cert'));
    write('', cas[0]!.keyPem);
    expect(() => new CaFileProvider({ certFile, keyFile })).toThrow(
      `error reading CA cert file "${certFile}": missing content for serving cert "csr-controller::${certFile}::${keyFile}"`,
    );
    write(cas[0]!.certPem, cas[1]!.keyPem);
    expect(() => new CaFileProvider({ certFile, keyFile })).toThrow('tls: private key does not match public key');
  });

  it('picks up new files, ignores a bad pair, and refuses to sign with a multi-certificate file', async () => {
    write(cas[0]!.certPem, cas[0]!.keyPem);
    const events: CaReloadEvent[] = [];
    const p = new CaFileProvider({ certFile, keyFile, onReload: (e) => events.push(e) });
    expect(p.name).toBe(`csr-controller::${certFile}::${keyFile}`);
    expect(await issuerOf(p)).toBe('CN=ca-a');
    expect(p.signer()).toBe(p.signer()); // prepared once, reused while files are unchanged

    write(cas[1]!.certPem, cas[1]!.keyPem);
    expect(await issuerOf(p)).toBe('CN=ca-bb');
    expect(events).toEqual([{ ok: true }]);

    write(cas[2]!.certPem, cas[1]!.keyPem); // mismatched: keep using ca-bb
    expect(await issuerOf(p)).toBe('CN=ca-bb');
    expect(events.at(-1)?.ok).toBe(false);

    write(cas[2]!.certPem + cas[3]!.certPem, cas[2]!.keyPem); // valid pair, but not exactly one certificate
    expect(() => p.signer()).toThrow(`error reading CA cert file "csr-controller::${certFile}::${keyFile}": expected 1 certificate, found 2`);

    write(cas[2]!.certPem, cas[2]!.keyPem);
    expect(await issuerOf(p)).toBe('CN=ca-ccc');
  });

  it('keeps the current CA while a file is missing during rotation', async () => {
    write(cas[0]!.certPem, cas[0]!.keyPem);
    const p = new CaFileProvider({ certFile, keyFile });
    fs.rmSync(keyFile);
    expect(await issuerOf(p)).toBe('CN=ca-a');
  });

  it('re-reads unchanged-looking files once the resync interval has passed', () => {
    write(cas[0]!.certPem, cas[0]!.keyPem);
    let now = 0;
    const p = new CaFileProvider({ certFile, keyFile, now: () => now, resyncMs: 1000 });
    const read = jest.spyOn(fs, 'readFileSync');
    p.signer();
    expect(read).not.toHaveBeenCalled();
    now = 1000;
    p.signer();
    expect(read).toHaveBeenCalledTimes(2);
    read.mockRestore();
  });
});
