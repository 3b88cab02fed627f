import type { CertificateSigningRequest } from '../../api/certificates.js';
import { StringInterner } from '../informer/interner.js';
import { csrCacheTransform } from './csr-cache-transform.js';
import { certificateNotAfter, hasCertificate } from './csr-conditions.js';
import { IssuedCertificates } from './issued-certificates.js';
import { createCertificateAuthority } from '../../pki/ca.js';
import { issueCertificate } from '../../pki/issue.js';
import { generateKeyPair } from '../../pki/keys.js';

/** A CSR as JSON.parse returns it: every string its own copy. */
const parsed = (name: string): CertificateSigningRequest =>
  JSON.parse(
    JSON.stringify({
      metadata: { name, uid: `uid-${name}`, managedFields: [{ manager: 'kubelet', operation: 'Update' }] },
      spec: { request: `req-${name}`, signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'], username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving.' }], certificate: `cert-${name}` },
    }),
  ) as CertificateSigningRequest;

describe('csrCacheTransform', () => {
  it('drops managedFields and the certificate text, keeps every other value, and still knows a certificate is set', () => {
    const out = csrCacheTransform()(parsed('a'));
    const expected = parsed('a');
    delete expected.metadata?.managedFields;
    delete expected.status?.certificate;
    // The API fields (what JSON sees); the certificate's stand-in is a symbol-keyed cache-only field.
    expect(JSON.parse(JSON.stringify(out))).toEqual(expected);
    expect(hasCertificate(out)).toBe(true);
    // Not a parsable certificate: no expiry known.
    expect(certificateNotAfter(out)).toBeUndefined();
    const pending = parsed('b');
    delete pending.status?.certificate;
    expect(hasCertificate(csrCacheTransform()(pending))).toBe(false);
  });

  it('interns repeated strings through a bounded table', () => {
    const interner = new StringInterner(6);
    const transform = csrCacheTransform(interner);
    transform(parsed('a'));
    expect(interner.size()).toBe(6);
    // A full table shares what it holds and stops growing.
    transform(parsed('b'));
    expect(interner.size()).toBe(6);
    expect(interner.intern('kubernetes.io/kube-apiserver-client-kubelet')).toBe('kubernetes.io/kube-apiserver-client-kubelet');
  });

  it('leaves frozen objects as they are, apart from managedFields', () => {
    const input = Object.freeze(parsed('c'));
    Object.freeze(input.spec);
    const out = csrCacheTransform()(input);
    expect(out.metadata?.managedFields).toBeUndefined();
    expect(out.spec).toBe(input.spec);
  });

  it('takes the expiry of a certificate its signer remembered, once, equal to what the certificate says', async () => {
    const ca = await createCertificateAuthority({ commonName: 'test-ca' });
    // Milliseconds a certificate cannot hold: the remembered value must still equal the parsed one.
    const notAfter = new Date(Date.now() + 3_600_789);
    const pem = await issueCertificate(ca, { subject: { commonName: 'system:node:n1' }, publicKeyPem: generateKeyPair().publicKeyPem, usages: ['digital signature', 'client auth'], notBefore: new Date(), notAfter });
    const text = Buffer.from(pem, 'latin1').toString('base64');
    const issuedCsr = (): CertificateSigningRequest => ({ ...parsed('d'), status: { certificate: text } });
    const fromCertificate = certificateNotAfter(issuedCsr());
    expect(fromCertificate).toBe(Math.floor(notAfter.getTime() / 1000) * 1000);

    const issued = new IssuedCertificates();
    const transform = csrCacheTransform(undefined, issued);
    issued.remember(text, notAfter);
    expect(certificateNotAfter(transform(issuedCsr()))).toBe(fromCertificate);
    // The memo is what was read (a value only it holds), once; then the certificate is decoded again.
    issued.remember(text, new Date(0));
    expect(certificateNotAfter(transform(issuedCsr()))).toBe(0);
    expect(certificateNotAfter(transform(issuedCsr()))).toBe(fromCertificate);
    // Another text is read from its certificate.
    issued.remember('b3RoZXI=', new Date(0));
    expect(certificateNotAfter(transform(issuedCsr()))).toBe(fromCertificate);
  });
});
