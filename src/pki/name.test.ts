import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createCa, issueLeaf } from '../../test/auth/fixtures.js';
import { certificateSubject } from './name.js';

describe('certificateSubject', () => {
  it('reads the subject of a certificate as @peculiar/x509 does, attribute by attribute', async () => {
    const ca = await createCa();
    const der = await issueLeaf(ca, { cn: 'alice', orgs: ['devs', 'system:masters'] });
    const name = certificateSubject(der);
    const reference = new x509.X509Certificate(der).subjectName;
    expect(name.commonName).toBe('alice');
    expect(name.organizations).toEqual(['devs', 'system:masters']);
    expect(name.organizations).toEqual(reference.getField('O'));
    expect(certificateSubject(new Uint8Array(ca.cert.rawData)).commonName).toBe('test-ca');
  });

  it('refuses bytes that are not a certificate', () => {
    expect(() => certificateSubject(Buffer.from('not a certificate'))).toThrow(/^asn1: /);
    expect(() => certificateSubject(Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]))).toThrow();
  });
});
