import { ApiError } from '../../http/errors.js';
import { Base64Error, checkBytesFields, decodeStdBase64, goBytesLiteral, sameBytes } from './bytes.js';

const offsetOf = (text: string): number | undefined => {
  try {
    decodeStdBase64(text);
    return undefined;
  } catch (err) {
    return (err as Base64Error).offset;
  }
};

describe('decodeStdBase64 (Go base64.StdEncoding)', () => {
  it('decodes padded input of every length like Node does', () => {
    for (let n = 0; n < 40; n++) {
      const bytes = Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff));
      expect(decodeStdBase64(bytes.toString('base64')).equals(bytes)).toBe(true);
    }
  });

  it('tolerates non-zero trailing bits like Go, with or without newlines', () => {
    expect([...decodeStdBase64('AR==')]).toEqual([1]);
    expect([...decodeStdBase64('AQJ=')]).toEqual([1, 2]);
    expect([...decodeStdBase64('AQ\nJ=')]).toEqual([1, 2]);
  });

  it('ignores CR and LF anywhere, including inside the padding', () => {
    expect(decodeStdBase64('SGVs\r\nbG8=\n').toString()).toBe('Hello');
    expect(decodeStdBase64('AQ=\n=').equals(Buffer.from([1]))).toBe(true);
  });

  it.each([
    ['A', 0],
    ['AB', 0],
    ['ABC', 0],
    ['AQ=', 3],
    ['A===', 1],
    ['AQ==x', 4],
    ['AQ==AQ==', 4],
    ['a*bc', 1],
    ['SGVsbG8 ', 7],
    ['-_8=', 0],
  ])('rejects %j at input byte %i', (text, offset) => {
    expect(offsetOf(text)).toBe(offset);
  });

  it('reports the Go message', () => {
    expect(() => decodeStdBase64('AQ=')).toThrow('illegal base64 data at input byte 3');
  });
});

describe('checkBytesFields', () => {
  it('accepts absent, null, empty and valid fields', () => {
    expect(() => checkBytesFields({})).not.toThrow();
    expect(() => checkBytesFields({ spec: { request: null }, status: { certificate: '' } })).not.toThrow();
    expect(() => checkBytesFields({ spec: { request: 'AQ==' }, status: { certificate: 'Ag==' } })).not.toThrow();
  });

  it('gives the decoder 400 for invalid base64 in spec.request or status.certificate', () => {
    for (const obj of [{ spec: { request: 'not base64!' } }, { status: { certificate: 'AQ=' } }]) {
      let caught: unknown;
      try {
        checkBytesFields(obj);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ApiError);
      expect((caught as ApiError).code).toBe(400);
      expect((caught as ApiError).reason).toBe('BadRequest');
      expect((caught as ApiError).message).toMatch(
        /^CertificateSigningRequest in version "v1" cannot be handled as a CertificateSigningRequest: illegal base64 data at input byte \d+$/,
      );
    }
  });

  it('gives the Go type error for a non-string []byte field', () => {
    expect(() => checkBytesFields({ spec: { request: 12 } })).toThrow(
      'CertificateSigningRequest in version "v1" cannot be handled as a CertificateSigningRequest: json: cannot unmarshal number into Go struct field CertificateSigningRequestSpec.spec.request of type []uint8',
    );
  });
});

describe('helpers', () => {
  it('prints []byte like Go %#v', () => {
    expect(goBytesLiteral(Buffer.from([0x2d, 0x0a, 0xff, 0]))).toBe('[]byte{0x2d, 0xa, 0xff, 0x0}');
    expect(goBytesLiteral(Buffer.alloc(0))).toBe('[]byte{}');
  });

  it('compares bytes, not text (nil equals empty)', () => {
    expect(sameBytes(undefined, '')).toBe(true);
    expect(sameBytes('AQ==', 'AQ=\n=')).toBe(true);
    expect(sameBytes('AQ==', 'Ag==')).toBe(false);
  });
});
