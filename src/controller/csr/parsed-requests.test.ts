import { createCertificateRequestPem, verifyCertificateRequestSignature } from '../../pki/csr.js';
import { PkiError } from '../../pki/errors.js';
import { generateKeyPair } from '../../pki/keys.js';
import { decodePemBlocks, encodePem } from '../../pki/pem.js';
import { ParsedRequests } from './parsed-requests.js';

/** spec.request (base64 of PEM) of a fresh P-256 request for `commonName`. */
async function request(commonName: string): Promise<string> {
  const pem = await createCertificateRequestPem({ privateKeyPem: generateKeyPair().privateKeyPem, commonName, organizations: ['system:nodes'] });
  return Buffer.from(pem, 'latin1').toString('base64');
}

describe('ParsedRequests', () => {
  it('parses spec.request once per text and hands the same parse to every caller', async () => {
    const memo = new ParsedRequests();
    const text = await request('system:node:a');
    const first = memo.parse(text);
    expect(first.subject.commonName).toBe('system:node:a');
    expect(first.subject.organizations).toEqual(['system:nodes']);
    // Another string with the same text (as a second JSON.parse of the CSR produces) finds the same entry.
    expect(memo.parse(JSON.parse(JSON.stringify(text)) as string)).toBe(first);
    expect(memo.size).toBe(1);
  });

  it('keeps at most maxEntries, dropping the oldest first', async () => {
    const memo = new ParsedRequests(2);
    const [a, b, c] = await Promise.all([request('a'), request('b'), request('c')]);
    const parsedA = memo.parse(a);
    memo.parse(b);
    memo.parse(c);
    expect(memo.size).toBe(2);
    // b and c are still held; a was dropped and is parsed anew.
    expect(memo.parse(c).subject.commonName).toBe('c');
    const again = memo.parse(a);
    expect(again).not.toBe(parsedA);
    expect(again.subject.commonName).toBe('a');
    expect(memo.size).toBe(2);
  });

  it('does not verify the signature (the signer must), and does not keep failures', async () => {
    const memo = new ParsedRequests();
    const der = Buffer.from(decodePemBlocks(Buffer.from(await request('system:node:t'), 'base64').toString('latin1'))[0]!.der);
    der[der.length - 1] = (der[der.length - 1] as number) ^ 0x01;
    const tampered = Buffer.from(encodePem('CERTIFICATE REQUEST', der), 'latin1').toString('base64');
    const parsed = memo.parse(tampered);
    expect(parsed.subject.commonName).toBe('system:node:t');
    expect(() => verifyCertificateRequestSignature(parsed.der)).toThrow('x509: ECDSA verification failure');

    expect(() => memo.parse(Buffer.from('not a request').toString('base64'))).toThrow(PkiError);
    expect(() => memo.parse(undefined)).toThrow(PkiError);
    expect(memo.size).toBe(1);
  });
});
