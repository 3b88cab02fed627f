import 'reflect-metadata';
import { createCertificateAuthority, type CaMaterial } from './ca.js';
import { parseCertificatePem, readCertificateInfo } from './certificate.js';
import { PkiError } from './errors.js';
import { decodePemBlocks, encodePem } from './pem.js';

let ca: CaMaterial;
let other: CaMaterial;
beforeAll(async () => {
  ca = await createCertificateAuthority({ commonName: 'one', now: new Date('2024-01-01T00:00:00Z'), validityDays: 1 });
  other = await createCertificateAuthority({ commonName: 'two' });
});

const expectError = (pem: string, message: string | RegExp): void => {
  expect(() => parseCertificatePem(pem)).toThrow(PkiError);
  expect(() => parseCertificatePem(pem)).toThrow(message);
};

describe('parseCertificatePem', () => {
  it('returns every certificate of a chain, ignoring text around blocks', () => {
    const certs = parseCertificatePem(`issued:\n${ca.certPem}\nchain:\n${other.certPem}the end`);
    expect(certs.map((c) => c.subject)).toEqual(['CN=one', 'CN=two']);
  });

  it('rejects other block types, headers, garbage, empty blocks and no blocks with the upstream texts', () => {
    expectError(`${ca.certPem}${ca.keyPem}`, 'only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"');
    expectError(ca.certPem.replace('-----\n', '-----\nFoo: bar\n\n'), 'no PEM block headers are permitted');
    expectError(encodePem('CERTIFICATE', Buffer.from('not a certificate')), /^x509: malformed certificate/);
    expectError(encodePem('CERTIFICATE', new Uint8Array(0)), 'found CERTIFICATE PEM block containing 0 certificates');
    expectError('just text', 'must contain at least one CERTIFICATE PEM block');
    const der = Buffer.concat([decodePemBlocks(ca.certPem)[0]!.der, Buffer.from([5, 0])]);
    expectError(encodePem('CERTIFICATE', der), 'x509: trailing data');
  });
});

describe('readCertificateInfo', () => {
  it('reads validity, names and extensions without a full decode', () => {
    const info = readCertificateInfo(decodePemBlocks(ca.certPem)[0]!.der);
    expect(info.notBefore.toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(info.notAfter.toISOString()).toBe('2024-01-02T00:00:00.000Z');
    expect(Buffer.from(info.subjectDer).equals(Buffer.from(info.issuerDer))).toBe(true);
    expect(info.extensions.get('2.5.29.19')?.critical).toBe(true);
    expect(info.extensions.has('2.5.29.14')).toBe(true);
  });
});
