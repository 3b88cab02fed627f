import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import { createCertificateAuthority, prepareCaSigner, type CaLike, type CaMaterial } from './ca.js';
import { parseCertificatePem } from './certificate.js';
import { createCertificateRequestPem, parseCertificateRequestPem } from './csr.js';
import { PkiError } from './errors.js';
import { issueCertificate, KEY_USAGES, type IssueRequest } from './issue.js';
import { generateKeyPair, type KeyAlgorithm } from './keys.js';

/** The signer's mapping (k8s-csr.md section 0), written out independently of the implementation. */
const KU = x509.KeyUsageFlags;
const EXPECTED: Record<string, { ku: number; eku?: string }> = {
  signing: { ku: KU.digitalSignature },
  'digital signature': { ku: KU.digitalSignature },
  'content commitment': { ku: KU.nonRepudiation },
  'key encipherment': { ku: KU.keyEncipherment },
  'key agreement': { ku: KU.keyAgreement },
  'data encipherment': { ku: KU.dataEncipherment },
  'cert sign': { ku: KU.keyCertSign },
  'crl sign': { ku: KU.cRLSign },
  'encipher only': { ku: KU.encipherOnly },
  'decipher only': { ku: KU.decipherOnly },
  any: { ku: 0, eku: '2.5.29.37.0' },
  'server auth': { ku: 0, eku: '1.3.6.1.5.5.7.3.1' },
  'client auth': { ku: 0, eku: '1.3.6.1.5.5.7.3.2' },
  'code signing': { ku: 0, eku: '1.3.6.1.5.5.7.3.3' },
  'email protection': { ku: 0, eku: '1.3.6.1.5.5.7.3.4' },
  's/mime': { ku: 0, eku: '1.3.6.1.5.5.7.3.4' },
  'ipsec end system': { ku: 0, eku: '1.3.6.1.5.5.7.3.5' },
  'ipsec tunnel': { ku: 0, eku: '1.3.6.1.5.5.7.3.6' },
  'ipsec user': { ku: 0, eku: '1.3.6.1.5.5.7.3.7' },
  timestamping: { ku: 0, eku: '1.3.6.1.5.5.7.3.8' },
  'ocsp signing': { ku: 0, eku: '1.3.6.1.5.5.7.3.9' },
  'microsoft sgc': { ku: 0, eku: '1.3.6.1.4.1.311.10.3.3' },
  'netscape sgc': { ku: 0, eku: '2.16.840.1.113730.4.1' },
};

const now = new Date();
const window = { notBefore: new Date(now.getTime() - 300_000), notAfter: new Date(now.getTime() + 3_600_000) };
let ecCa: CaMaterial;
let rsaCa: CaMaterial;
const leafKey = generateKeyPair('ECDSA-P256');

beforeAll(async () => {
  ecCa = await createCertificateAuthority({ commonName: 'test-ca' });
  rsaCa = await createCertificateAuthority({ commonName: 'rsa-ca', keyAlgorithm: 'RSA-2048' });
});

async function issue(ca: CaLike, over: Partial<IssueRequest> = {}): Promise<x509.X509Certificate> {
  const pem = await issueCertificate(ca, { subject: { commonName: 'leaf' }, publicKeyPem: leafKey.publicKeyPem, usages: ['client auth'], ...window, ...over });
  const certs = parseCertificatePem(pem);
  expect(certs).toHaveLength(1);
  return certs[0]!;
}

function withFiles<T>(files: Record<string, string>, fn: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pki-issue-'));
  try {
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** `openssl verify` of a leaf against a CA, plus `openssl x509 -text` of the leaf. */
function openssl(caPem: string, certPem: string): { verify: string; text: string } {
  return withFiles({ 'ca.pem': caPem, 'cert.pem': certPem }, (dir) => ({
    verify: execFileSync('openssl', ['verify', '-CAfile', path.join(dir, 'ca.pem'), path.join(dir, 'cert.pem')], { encoding: 'utf8' }),
    text: execFileSync('openssl', ['x509', '-noout', '-text', '-in', path.join(dir, 'cert.pem')], { encoding: 'utf8' }),
  }));
}

describe('issueCertificate', () => {
  it.each(KEY_USAGES.map((u) => [u]))('maps usage %j like the Kubernetes signer', async (usage) => {
    const cert = await issue(ecCa, { usages: [usage] });
    const want = EXPECTED[usage]!;
    const ku = cert.getExtension(x509.KeyUsagesExtension);
    expect(ku?.usages ?? 0).toBe(want.ku);
    if (ku) expect(ku.critical).toBe(true);
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? []).toEqual(want.eku ? [want.eku] : []);
  });

  it('ORs key usage bits and de-duplicates and orders extended usages', async () => {
    const usages = [...KEY_USAGES].reverse();
    const cert = await issue(ecCa, { usages: [...usages, 'client auth'] });
    expect(cert.getExtension(x509.KeyUsagesExtension)?.usages).toBe(511);
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual([
      '2.5.29.37.0', '1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2', '1.3.6.1.5.5.7.3.3', '1.3.6.1.5.5.7.3.4', '1.3.6.1.5.5.7.3.5',
      '1.3.6.1.5.5.7.3.6', '1.3.6.1.5.5.7.3.7', '1.3.6.1.5.5.7.3.8', '1.3.6.1.5.5.7.3.9', '1.3.6.1.4.1.311.10.3.3', '2.16.840.1.113730.4.1',
    ]);
  });

  it('fails on unknown usages with the upstream message', async () => {
    await expect(issueCertificate(ecCa, { subject: { commonName: 'x' }, publicKeyPem: leafKey.publicKeyPem, usages: ['client auth', 'foo', 'bar'], ...window }))
      .rejects.toThrow(new PkiError('unrecognized usage values: ["foo" "bar"]'));
  });

  it('copies subject, SANs and key from a CSR and sets issuer, AKI, BasicConstraints, serial and validity', async () => {
    const csrPem = await createCertificateRequestPem({
      privateKeyPem: generateKeyPair('ECDSA-P384').privateKeyPem,
      commonName: 'system:node:n1',
      organizations: ['system:nodes', 'extra'],
      dnsNames: ['n1.example'],
      ipAddresses: ['10.0.0.7', '2001:db8::7'],
      emailAddresses: ['n1@example.com'],
      uris: ['spiffe://cluster/n1'],
    });
    const csr = parseCertificateRequestPem(csrPem);
    const cert = await issue(ecCa, { ...csr, publicKeyPem: undefined, subject: csr.subject, usages: ['digital signature', 'key encipherment', 'client auth'] });
    const ca = new x509.X509Certificate(ecCa.certPem);
    expect(cert.subject).toBe('O=extra+O=system:nodes, CN=system:node:n1');
    expect(Buffer.from(cert.subjectName.toArrayBuffer()).equals(Buffer.from(csr.subjectDer))).toBe(true);
    expect(cert.issuer).toBe(ca.subject);
    expect(Buffer.from(cert.publicKey.rawData).equals(Buffer.from(csr.publicKeyDer))).toBe(true);
    expect(cert.notBefore.getTime()).toBe(Math.floor(window.notBefore.getTime() / 1000) * 1000);
    expect(cert.notAfter.getTime()).toBe(Math.floor(window.notAfter.getTime() / 1000) * 1000);
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension)!;
    expect(san.critical).toBe(false);
    expect(san.names.toJSON()).toEqual([
      { type: 'dns', value: 'n1.example' },
      { type: 'email', value: 'n1@example.com' },
      { type: 'ip', value: '10.0.0.7' },
      { type: 'ip', value: '2001:db8::7' },
      { type: 'url', value: 'spiffe://cluster/n1' },
    ]);
    const bc = cert.getExtension(x509.BasicConstraintsExtension)!;
    expect([bc.ca, bc.critical]).toEqual([false, true]);
    expect(cert.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId).toBe(ca.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId);
    expect(cert.getExtension(x509.SubjectKeyIdentifierExtension)).toBeNull();
    expect(cert.extensions).toHaveLength(5);
    const serial = BigInt(`0x${cert.serialNumber}`);
    expect(serial > 0n && serial < 2n ** 128n).toBe(true);
    expect(cert.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-256' } });
    expect(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
    const { verify, text } = openssl(ecCa.certPem, cert.toString('pem'));
    expect(verify).toMatch(/: OK/);
    expect(text).toMatch(/Digital Signature, Key Encipherment/);
    expect(text).toMatch(/TLS Web Client Authentication/);
    expect(text).toMatch(/CA:FALSE/);
    expect(text).toMatch(/DNS:n1\.example, email:n1@example\.com, IP Address:10\.0\.0\.7, IP Address:2001:DB8:0:0:0:0:0:7, URI:spiffe:\/\/cluster\/n1/);
  });

  it('never carries a Kubernetes user UID attribute from the request into the certificate', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uid-csr-'));
    const key = path.join(dir, 'key.pem');
    fs.writeFileSync(key, generateKeyPair('ECDSA-P256').privateKeyPem);
    // openssl names an OID it does not know only through an oid_section.
    const config = path.join(dir, 'req.cnf');
    fs.writeFileSync(config, 'oid_section = oids\n[oids]\nk8suid = 1.3.6.1.4.1.57683.2\n[req]\ndistinguished_name = dn\n[dn]\n');
    const csrPem = execFileSync('openssl', ['req', '-new', '-config', config, '-key', key, '-subj', '/O=system:nodes/CN=system:node:n1/k8suid=chosen-uid'], { encoding: 'utf8' });
    const csr = parseCertificateRequestPem(csrPem);
    expect(csr.subject.uids).toEqual(['chosen-uid']);
    const cert = await issue(ecCa, { ...csr, publicKeyPem: undefined, subject: csr.subject, usages: ['digital signature', 'client auth'] });
    expect(cert.subject).toBe('O=system:nodes, CN=system:node:n1');
    expect(cert.subjectName.getField('1.3.6.1.4.1.57683.2')).toEqual([]);
    fs.rmSync(dir, { recursive: true });
  });

  it('gives distinct serials', async () => {
    const serials = new Set<string>();
    for (let i = 0; i < 20; i++) serials.add((await issue(ecCa)).serialNumber);
    expect(serials.size).toBe(20);
  });

  it('keeps a raw subject DER when asked and marks SANs critical for an empty subject', async () => {
    const cert = await issue(ecCa, { subject: { der: new Uint8Array([0x30, 0]) }, dnsNames: ['only.example'] });
    expect(cert.subject).toBe('');
    expect(cert.getExtension(x509.SubjectAlternativeNameExtension)?.critical).toBe(true);
    expect(openssl(ecCa.certPem, cert.toString('pem')).verify).toMatch(/: OK/);
  });

  it.each<[string, KeyAlgorithm]>([
    ['ECDSA-P256', 'ECDSA-P256'],
    ['ECDSA-P384', 'ECDSA-P384'],
    ['RSA-2048', 'RSA-2048'],
    ['Ed25519', 'Ed25519'],
  ])('signs a %s key with an RSA-2048 CA into a chain openssl verifies', async (_name, alg) => {
    const csr = parseCertificateRequestPem(await createCertificateRequestPem({ privateKeyPem: generateKeyPair(alg).privateKeyPem, commonName: 'kube-admin', organizations: ['devs'] }));
    const cert = await issue(rsaCa, { subject: csr.subject, publicKeyDer: csr.publicKeyDer, usages: ['digital signature', 'server auth', 'client auth'] });
    expect(cert.signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    const { verify, text } = openssl(rsaCa.certPem, cert.toString('pem'));
    expect(verify).toMatch(/: OK/);
    expect(text).toMatch(/TLS Web Server Authentication, TLS Web Client Authentication/);
  });

  it.each<KeyAlgorithm>(['ECDSA-P384', 'Ed25519'])('issues from a %s CA', async (alg) => {
    const ca = await createCertificateAuthority({ commonName: `ca-${alg}`, keyAlgorithm: alg });
    const cert = await issue(prepareCaSigner(ca));
    expect(openssl(ca.certPem, cert.toString('pem')).verify).toMatch(/: OK/);
  });
});

describe('createCertificateAuthority', () => {
  it('makes a self-signed CA certificate with CA:TRUE and a key id', async () => {
    const start = new Date('2030-01-02T03:04:05Z');
    const ca = await createCertificateAuthority({ commonName: 'my-ca', validityDays: 10, now: start });
    const [cert] = parseCertificatePem(ca.certPem);
    expect(cert!.subject).toBe('CN=my-ca');
    expect(cert!.issuer).toBe('CN=my-ca');
    expect([cert!.notBefore.toISOString(), cert!.notAfter.toISOString()]).toEqual(['2030-01-02T03:04:05.000Z', '2030-01-12T03:04:05.000Z']);
    expect(cert!.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(true);
    expect(cert!.getExtension(x509.KeyUsagesExtension)?.usages).toBe(KU.digitalSignature | KU.keyEncipherment | KU.keyCertSign);
    expect(cert!.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId).toMatch(/^[0-9a-f]{40}$/);
    expect(await cert!.verify({ signatureOnly: true })).toBe(true);
    expect(prepareCaSigner(ca).keyAlgorithm).toBe('ECDSA');
  });
});
