import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import { createCertificateRequestPem, parseCertificateRequestPem, verifyCertificateRequestSignature } from './csr.js';
import { PkiError } from './errors.js';
import { generateKeyPair, type KeyAlgorithm } from './keys.js';
import { decodePemBlocks, encodePem } from './pem.js';

const ALGS: [KeyAlgorithm, string, string | undefined][] = [
  ['ECDSA-P256', 'ECDSA', 'P-256'],
  ['ECDSA-P384', 'ECDSA', 'P-384'],
  ['RSA-2048', 'RSA', undefined],
  ['Ed25519', 'Ed25519', undefined],
];

function expectPkiError(fn: () => unknown, code: string, message: string | RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(PkiError);
  expect((caught as PkiError).code).toBe(code);
  expect((caught as PkiError).message).toMatch(message);
}

/** Re-wraps a CSR PEM after changing one DER byte. */
function tamper(pem: string, index: (der: Uint8Array) => number): string {
  const der = Buffer.from(decodePemBlocks(pem)[0]!.der);
  const i = index(der);
  der[i] = (der[i] as number) ^ 0x01;
  return encodePem('CERTIFICATE REQUEST', der);
}

describe('createCertificateRequestPem + parseCertificateRequestPem', () => {
  it.each(ALGS)('round-trips a %s request', async (alg, algorithm, curve) => {
    const { privateKeyPem, publicKeyPem } = generateKeyPair(alg);
    const pem = await createCertificateRequestPem({ privateKeyPem, commonName: 'system:node:n1', organizations: ['system:nodes'] });
    const csr = parseCertificateRequestPem(pem);
    expect(csr.subject.commonName).toBe('system:node:n1');
    expect(csr.subject.organizations).toEqual(['system:nodes']);
    expect(csr.subject.text).toBe('CN=system:node:n1,O=system:nodes');
    expect(csr.publicKeyAlgorithm).toBe(algorithm);
    expect(csr.publicKeyCurve).toBe(curve);
    expect(encodePem('PUBLIC KEY', csr.publicKeyDer)).toBe(publicKeyPem);
    expect([csr.dnsNames, csr.ipAddresses, csr.emailAddresses, csr.uris]).toEqual([[], [], [], []]);
    // An independent parser agrees that the request is well-formed and correctly self-signed.
    const peculiar = new x509.Pkcs10CertificateRequest(pem);
    expect(peculiar.subject).toBe('O=system:nodes, CN=system:node:n1');
    if (alg !== 'Ed25519') expect(await peculiar.verify()).toBe(true);
  });

  it.each(ALGS)('rejects a %s request whose signature was tampered with', async (alg) => {
    const pem = await createCertificateRequestPem({ privateKeyPem: generateKeyPair(alg).privateKeyPem, commonName: 'x' });
    expectPkiError(() => parseCertificateRequestPem(tamper(pem, (d) => d.length - 1)), 'signature', /verification (failure|error)/);
    // Changing a signed byte (inside the subject CN) breaks the signature too.
    const signedByte = (d: Uint8Array): number => Buffer.from(d).indexOf('x', 0, 'latin1');
    expectPkiError(() => parseCertificateRequestPem(tamper(pem, signedByte)), 'signature', /verification (failure|error)/);
    // ...but parsing without verification still works for callers that verified earlier.
    expect(parseCertificateRequestPem(tamper(pem, signedByte), { verifySignature: false }).subject.commonName).toBe('y');
  });

  it.each(ALGS)('verifyCertificateRequestSignature on a %s request parsed unverified: passes when intact, else throws what parsing would', async (alg) => {
    const pem = await createCertificateRequestPem({ privateKeyPem: generateKeyPair(alg).privateKeyPem, commonName: 'x' });
    expect(() => verifyCertificateRequestSignature(parseCertificateRequestPem(pem, { verifySignature: false }).der)).not.toThrow();
    for (const bad of [tamper(pem, (d) => d.length - 1), tamper(pem, (d) => Buffer.from(d).indexOf('x', 0, 'latin1'))]) {
      const der = parseCertificateRequestPem(bad, { verifySignature: false }).der;
      let parseError: unknown;
      try {
        parseCertificateRequestPem(bad);
      } catch (err) {
        parseError = err;
      }
      expect(parseError).toBeInstanceOf(PkiError);
      expectPkiError(() => verifyCertificateRequestSignature(der), 'signature', (parseError as PkiError).message);
    }
  });

  it.each(ALGS)('a %s parse keeps the key it imported, and verifying with that parse reuses it and still refuses a tampered request', async (alg) => {
    const pem = await createCertificateRequestPem({ privateKeyPem: generateKeyPair(alg).privateKeyPem, commonName: 'x' });
    const verified = parseCertificateRequestPem(pem);
    expect(verified.publicKey?.export({ type: 'spki', format: 'der' })).toEqual(Buffer.from(verified.publicKeyDer));
    const unverified = parseCertificateRequestPem(pem, { verifySignature: false });
    // Only an EC key is imported by an unverified parse (Go's check that its point is on the curve).
    expect(unverified.publicKey !== undefined).toBe(alg.startsWith('ECDSA'));
    expect(() => verifyCertificateRequestSignature(unverified)).not.toThrow();
    const bad = parseCertificateRequestPem(tamper(pem, (d) => Buffer.from(d).indexOf('x', 0, 'latin1')), { verifySignature: false });
    expectPkiError(() => verifyCertificateRequestSignature(bad), 'signature', /verification (failure|error)/);
  });

  it('extracts every kind of SAN from a request made by openssl', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pki-csr-'));
    try {
      const keyFile = path.join(dir, 'key.pem');
      fs.writeFileSync(keyFile, generateKeyPair('ECDSA-P256').privateKeyPem);
      const pem = execFileSync('openssl', [
        'req', '-new', '-key', keyFile, '-subj', '/C=DE/O=b\\+c/O=a/OU=ou1/CN=node 1',
        '-addext', 'subjectAltName=DNS:a.example,DNS:*.b.example,IP:10.0.0.1,IP:2001:db8:0:0:1:0:0:1,IP:::ffff:192.0.2.1,email:x@y.z,URI:spiffe://td/ns/x',
      ], { encoding: 'utf8' });
      const csr = parseCertificateRequestPem(`leading text\n${pem}trailing text`);
      expect(csr.dnsNames).toEqual(['a.example', '*.b.example']);
      expect(csr.ipAddresses).toEqual(['10.0.0.1', '2001:db8::1:0:0:1', '192.0.2.1']);
      expect(csr.emailAddresses).toEqual(['x@y.z']);
      expect(csr.uris).toEqual(['spiffe://td/ns/x']);
      expect(csr.subject).toMatchObject({ commonName: 'node 1', organizations: ['b+c', 'a'], organizationalUnits: ['ou1'], countries: ['DE'] });
      expect(csr.subject.text).toBe('CN=node 1,OU=ou1,O=b\\+c+O=a,C=DE');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes SANs that openssl reads back, and a signature openssl verifies', async () => {
    const pem = await createCertificateRequestPem({
      privateKeyPem: generateKeyPair('RSA-2048').privateKeyPem,
      commonName: 'svc',
      dnsNames: ['svc.ns.svc'],
      ipAddresses: ['10.1.2.3', 'fe80::1'],
      emailAddresses: ['a@b.c'],
      uris: ['https://example.com/x'],
    });
    const text = execFileSync('openssl', ['req', '-noout', '-text', '-verify'], { input: pem, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    expect(text).toMatch(/DNS:svc\.ns\.svc, email:a@b\.c, IP Address:10\.1\.2\.3, IP Address:FE80:0:0:0:0:0:0:1, URI:https:\/\/example\.com\/x/);
    const csr = parseCertificateRequestPem(pem);
    expect(csr.ipAddresses).toEqual(['10.1.2.3', 'fe80::1']);
  });

  it('parses a request made by @peculiar/x509 (WebCrypto)', async () => {
    const alg = { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' };
    const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as x509.Pkcs10CertificateRequestCreateParams['keys'];
    const req = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=web, O=acme',
      keys,
      signingAlgorithm: alg,
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'web.acme' }, { type: 'ip', value: '192.168.0.9' }])],
    });
    const csr = parseCertificateRequestPem(req.toString('pem'));
    expect(csr).toMatchObject({ dnsNames: ['web.acme'], ipAddresses: ['192.168.0.9'], publicKeyCurve: 'P-384' });
    expect(csr.subject.text).toBe('CN=web,O=acme');
  });

  it('rejects input without a CERTIFICATE REQUEST block with the upstream message', () => {
    expectPkiError(() => parseCertificateRequestPem('not pem at all'), 'pem', 'PEM block type must be CERTIFICATE REQUEST');
    expectPkiError(() => parseCertificateRequestPem(encodePem('CERTIFICATE', new Uint8Array([0x30, 0]))), 'pem-type', 'PEM block type must be CERTIFICATE REQUEST');
  });

  it('rejects garbage DER and trailing data', async () => {
    expectPkiError(() => parseCertificateRequestPem(encodePem('CERTIFICATE REQUEST', Buffer.from('garbage!'))), 'malformed', 'x509: malformed certificate request');
    expectPkiError(() => parseCertificateRequestPem(encodePem('CERTIFICATE REQUEST', Buffer.from([0x30, 3, 2, 1, 0]))), 'malformed', 'x509: malformed certificate request');
    const pem = await createCertificateRequestPem({ privateKeyPem: generateKeyPair().privateKeyPem, commonName: 'x' });
    const der = Buffer.concat([decodePemBlocks(pem)[0]!.der, Buffer.from([0])]);
    expectPkiError(() => parseCertificateRequestPem(encodePem('CERTIFICATE REQUEST', der)), 'malformed', 'asn1: syntax error: trailing data');
  });
});
