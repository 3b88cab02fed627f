import { PkiError } from './errors.js';
import { encodeSubjectAltNames, formatIp, parseIp, parseSubjectAltNames } from './san.js';

describe('IP addresses', () => {
  it.each([
    ['10.0.0.1', '0a000001', '10.0.0.1'],
    ['2001:db8::1', '20010db8000000000000000000000001', '2001:db8::1'],
    ['::', '00000000000000000000000000000000', '::'],
    ['1:0:0:2:0:0:0:3', '00010000000000020000000000000003', '1:0:0:2::3'],
    ['1:0:2:3:4:5:6:7', '00010000000200030004000500060007', '1:0:2:3:4:5:6:7'],
    ['::ffff:192.0.2.1', 'c0000201', '192.0.2.1'],
    ['64:ff9b::192.0.2.1', '0064ff9b0000000000000000c0000201', '64:ff9b::c000:201'],
  ])('%s encodes as %s and prints as %s (Go net.IP semantics)', (text, hex, printed) => {
    const bytes = parseIp(text);
    expect(bytes.toString('hex')).toBe(hex);
    expect(formatIp(bytes)).toBe(printed);
  });

  it('prints an IPv4-mapped 16-byte address as IPv4 and rejects other lengths', () => {
    expect(formatIp(Buffer.from('00000000000000000000ffff7f000001', 'hex'))).toBe('127.0.0.1');
    expect(() => formatIp(new Uint8Array(5))).toThrow(new PkiError('x509: cannot parse IP address of length 5'));
    expect(() => parseIp('300.1.1.1')).toThrow(PkiError);
  });
});

describe('subjectAltName GeneralNames', () => {
  it('round-trips the four kinds in Go order and skips other kinds', () => {
    const der = encodeSubjectAltNames({ uris: ['urn:x'], ipAddresses: ['::1'], emailAddresses: ['a@b'], dnsNames: ['d'] })!;
    // Append a directoryName ([4]) the parser must ignore.
    const withOther = Buffer.concat([Buffer.from([0x30, der.length - 2 + 4]), der.subarray(2), Buffer.from([0xa4, 0x02, 0x30, 0x00])]);
    expect(parseSubjectAltNames(withOther)).toEqual({ dnsNames: ['d'], emailAddresses: ['a@b'], ipAddresses: ['::1'], uris: ['urn:x'] });
    expect(der[2]).toBe(0x82); // the DNS name comes first
  });

  it('refuses non-ASCII names', () => {
    expect(() => encodeSubjectAltNames({ dnsNames: ['bücher.example'] })).toThrow(PkiError);
    expect(() => parseSubjectAltNames(Buffer.from([0x30, 3, 0x82, 1, 0xfc]))).toThrow('x509: SAN dNSName is malformed');
    expect(encodeSubjectAltNames({})).toBeUndefined();
  });
});
