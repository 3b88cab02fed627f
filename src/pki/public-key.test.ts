import crypto from 'node:crypto';
import { goPublicKey, goPublicKeyError, keyPolicyError } from './public-key.js';

const spki = (type: 'ec' | 'rsa' | 'ed25519', opts: Record<string, unknown> = {}): Buffer =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the overloads want a literal type
  crypto.generateKeyPairSync(type as any, opts).publicKey.export({ type: 'spki', format: 'der' }) as Buffer;

describe('goPublicKeyError: what Go refuses, with its text', () => {
  it('accepts the curves Go knows, RSA and Ed25519', () => {
    for (const namedCurve of ['P-256', 'P-384', 'P-521', 'secp224r1']) expect(goPublicKeyError(spki('ec', { namedCurve }))).toBeUndefined();
    expect(goPublicKeyError(spki('rsa', { modulusLength: 1024 }))).toBeUndefined();
    expect(goPublicKeyError(spki('ed25519'))).toBeUndefined();
  });

  it('refuses curves Go does not know', () => {
    expect(goPublicKeyError(spki('ec', { namedCurve: 'secp256k1' }))).toBe('x509: unsupported elliptic curve');
    expect(goPublicKeyError(spki('ec', { namedCurve: 'brainpoolP256r1' }))).toBe('x509: unsupported elliptic curve');
  });

  it('refuses a compressed or off-curve point', () => {
    const der = spki('ec', { namedCurve: 'P-256' });
    const offCurve = Buffer.from(der);
    offCurve[offCurve.length - 1] = (offCurve[offCurve.length - 1] ?? 0) ^ 1;
    expect(goPublicKeyError(offCurve)).toBe('x509: failed to unmarshal elliptic curve point');
    const compressed = Buffer.from(crypto.createPublicKey({ key: der, format: 'der', type: 'spki' }).export({ format: 'jwk' }).x ?? '', 'base64url');
    // SEQUENCE { SEQUENCE { ecPublicKey, prime256v1 }, BIT STRING 02||x }
    const alg = der.subarray(2, 2 + 2 + (der[3] ?? 0));
    const bits = Buffer.concat([Buffer.from([0x03, 34, 0, 0x02]), compressed]);
    const body = Buffer.concat([alg, bits]);
    expect(goPublicKeyError(Buffer.concat([Buffer.from([0x30, body.length]), body]))).toBe('x509: failed to unmarshal elliptic curve point');
  });

  it('refuses a P-256 point whose coordinate is not reduced (x + p for a point on the curve), as elliptic.Unmarshal does', () => {
    const p = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
    const b = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;
    const pow = (base: bigint, e: bigint): bigint => {
      let r = 1n;
      for (base %= p; e > 0n; e >>= 1n, base = (base * base) % p) if (e & 1n) r = (r * base) % p;
      return r;
    };
    // The smallest x on the curve (y² = x³ - 3x + b; p ≡ 3 mod 4, so a square root is a power).
    let x = 1n;
    let y = 0n;
    for (; ; x++) {
      const rhs = (((x * x * x - 3n * x + b) % p) + p) % p;
      y = pow(rhs, (p + 1n) / 4n);
      if ((y * y) % p === rhs) break;
    }
    const der = spki('ec', { namedCurve: 'P-256' });
    const withPoint = (px: bigint): Buffer => {
      const out = Buffer.from(der);
      Buffer.from(px.toString(16).padStart(64, '0') + y.toString(16).padStart(64, '0'), 'hex').copy(out, out.length - 64);
      return out;
    };
    expect(goPublicKeyError(withPoint(x))).toBeUndefined();
    expect(goPublicKeyError(withPoint(x + p))).toBe('x509: failed to unmarshal elliptic curve point');
  });

  it('returns the EC key it imported to check the point, and no key with a refusal', () => {
    const der = spki('ec', { namedCurve: 'P-256' });
    expect(goPublicKey(der).key?.export({ type: 'spki', format: 'der' })).toEqual(der);
    const offCurve = Buffer.from(der);
    offCurve[offCurve.length - 1] = (offCurve[offCurve.length - 1] ?? 0) ^ 1;
    expect(goPublicKey(offCurve)).toEqual({ error: 'x509: failed to unmarshal elliptic curve point' });
  });

  it('refuses RSA without NULL parameters and Ed25519 with parameters', () => {
    const rsa = spki('rsa', { modulusLength: 1024 });
    const i = rsa.indexOf(Buffer.from([0x05, 0x00]));
    // Replace NULL by an empty OCTET STRING: same length, not NULL.
    const noNull = Buffer.from(rsa);
    noNull[i] = 0x04;
    expect(goPublicKeyError(noNull)).toBe('x509: RSA key missing NULL parameters');
    const ed = spki('ed25519');
    // SEQUENCE { SEQUENCE { OID 1.3.101.112, NULL }, BIT STRING }
    const withParams = Buffer.concat([Buffer.from([0x30, (ed[1] ?? 0) + 2, 0x30, 7]), ed.subarray(4, 9), Buffer.from([0x05, 0x00]), ed.subarray(9)]);
    expect(goPublicKeyError(withParams)).toBe('x509: Ed25519 key encoded with illegal parameters');
  });
});

describe('keyPolicyError: the signers\' policy', () => {
  it('refuses small RSA moduli and curves other than P-256 and P-384', () => {
    expect(keyPolicyError(spki('rsa', { modulusLength: 1024 }), { minRsaBits: 2048 })).toBe('key policy: RSA key of 1024 bits is below the minimum of 2048');
    expect(keyPolicyError(spki('rsa', { modulusLength: 2048 }), { minRsaBits: 2048 })).toBeUndefined();
    expect(keyPolicyError(spki('rsa', { modulusLength: 2048 }), { minRsaBits: 3072 })).toMatch(/2048 bits is below the minimum of 3072/);
    expect(keyPolicyError(spki('ec', { namedCurve: 'P-256' }), { minRsaBits: 2048 })).toBeUndefined();
    expect(keyPolicyError(spki('ec', { namedCurve: 'P-384' }), { minRsaBits: 2048 })).toBeUndefined();
    expect(keyPolicyError(spki('ec', { namedCurve: 'P-521' }), { minRsaBits: 2048 })).toMatch(/curve P-521 is not allowed/);
    expect(keyPolicyError(spki('ed25519'), { minRsaBits: 2048 })).toBeUndefined();
  });
});
