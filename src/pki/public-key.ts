/**
 * Two judgements of a request's public key (its SubjectPublicKeyInfo DER):
 * - goPublicKeyError: what Go's x509.ParseCertificateRequest refuses, with Go's text. Upstream's
 *   CSR validation parses with it, so a key Go cannot load (secp256k1, brainpool, explicit curve
 *   parameters as in CurveBall, a point off its curve) is a 422 there, and must be one here: Go
 *   clients could never use a certificate issued for it.
 * - keyPolicyError: what our signers refuse beyond that (small RSA moduli, curves other than P-256
 *   and P-384), so an approved request with such a key is marked Failed rather than signed.
 */
import type { KeyObject } from 'node:crypto';
import { TAG, children, decodeOid, expectTlv, value, type Tlv } from './der.js';
import { importSpki } from './keys.js';

const OID_RSA = '1.2.840.113549.1.1.1';
const OID_EC = '1.2.840.10045.2.1';
const OID_ED25519 = '1.3.101.112';

/** The curves Go's namedCurveFromOID knows, with their field size in bytes. */
const GO_CURVES: Record<string, { name: string; bytes: number }> = {
  '1.3.132.0.33': { name: 'P-224', bytes: 28 },
  '1.2.840.10045.3.1.7': { name: 'P-256', bytes: 32 },
  '1.3.132.0.34': { name: 'P-384', bytes: 48 },
  '1.3.132.0.35': { name: 'P-521', bytes: 66 },
};

interface Spki {
  algorithm: string;
  /** The AlgorithmIdentifier's parameters element, absent when there is none. */
  params: { tlv: Tlv; der: Uint8Array } | undefined;
  keyBits: Uint8Array;
}

function readSpki(spki: Uint8Array): Spki | undefined {
  try {
    const root = expectTlv(spki, 0, TAG.SEQUENCE);
    const [alg, bits] = children(spki, root);
    if (alg?.tag !== TAG.SEQUENCE || bits?.tag !== TAG.BIT_STRING) return undefined;
    const [algOid, params] = children(spki, alg);
    if (algOid?.tag !== TAG.OID) return undefined;
    return {
      algorithm: decodeOid(value(spki, algOid)),
      params: params ? { tlv: params, der: spki.subarray(params.start, params.end) } : undefined,
      keyBits: value(spki, bits).subarray(1),
    };
  } catch {
    return undefined;
  }
}

const strip = (b: Uint8Array): Uint8Array => {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
};

/** The RSA modulus and exponent TLVs, or Go's error for the first thing wrong. */
function rsaError(s: Spki): string | undefined {
  const p = s.params;
  if (!p || p.tlv.tag !== TAG.NULL || p.der.length !== 2) return 'x509: RSA key missing NULL parameters';
  let parts: Tlv[];
  try {
    parts = children(s.keyBits, expectTlv(s.keyBits, 0, TAG.SEQUENCE));
  } catch {
    return 'x509: invalid RSA public key';
  }
  const [n, e] = parts;
  if (n?.tag !== TAG.INTEGER) return 'x509: invalid RSA modulus';
  // Go reads the exponent into an int: more than 63 bits does not fit.
  if (e?.tag !== TAG.INTEGER || strip(value(s.keyBits, e)).length > 8) return 'x509: invalid RSA public exponent';
  const positive = (b: Uint8Array): boolean => (b[0] ?? 0) < 0x80 && strip(b).some((x) => x !== 0);
  if (!positive(value(s.keyBits, n))) return 'x509: RSA modulus is not a positive number';
  if (!positive(value(s.keyBits, e))) return 'x509: RSA public exponent is not a positive number';
  return undefined;
}

/** Go's verdict on an EC key; loading the point is what checks it lies on its curve, so the key comes with it. */
function ecVerdict(spki: Uint8Array, s: Spki): GoVerdict {
  const unmarshal = { error: 'x509: failed to unmarshal elliptic curve point' };
  // Go wants a named curve: explicit parameters (a SEQUENCE: CurveBall), NULL or nothing are not one.
  if (s.params?.tlv.tag !== TAG.OID) return { error: 'x509: invalid ECDSA parameters' };
  const curve = GO_CURVES[decodeOid(value(spki, s.params.tlv))];
  if (!curve) return { error: 'x509: unsupported elliptic curve' };
  // elliptic.Unmarshal: the uncompressed form only, of the exact length, and a point on the curve.
  const bits = s.keyBits;
  if (bits[0] !== 0x04 || bits.length !== 1 + 2 * curve.bytes) return unmarshal;
  try {
    return { key: importSpki(spki) };
  } catch {
    return unmarshal;
  }
}

/**
 * Go's parsePublicKey verdict on an SPKI: `error` as ParseCertificateRequest reports it, absent when
 * Go accepts the key. `key` is the key when the check had to import it (EC keys), for the signature
 * check to reuse: an import is a third of a verification's cost. Algorithms Go does not know are
 * left to the signature check, as in Go.
 */
export type GoVerdict = { error: string; key?: undefined } | { error?: undefined; key?: KeyObject };

export function goPublicKey(spki: Uint8Array): GoVerdict {
  const s = readSpki(spki);
  if (!s) return {};
  if (s.algorithm === OID_RSA) {
    const error = rsaError(s);
    return error === undefined ? {} : { error };
  }
  if (s.algorithm === OID_EC) return ecVerdict(spki, s);
  if (s.algorithm === OID_ED25519) {
    if (s.params) return { error: 'x509: Ed25519 key encoded with illegal parameters' };
    if (s.keyBits.length !== 32) return { error: 'x509: wrong Ed25519 public key size' };
  }
  return {};
}

/** goPublicKey's error alone. */
export function goPublicKeyError(spki: Uint8Array): string | undefined {
  return goPublicKey(spki).error;
}

/** The signers' key policy (--signer-min-rsa-bits; the curves are fixed). */
export interface KeyPolicy {
  minRsaBits: number;
}

/** Curves a signer issues for; P-224 and P-521 parse in Go but are refused here. */
export const ALLOWED_CURVES: readonly string[] = ['P-256', 'P-384'];

/** The bit length of an RSA modulus (big-endian magnitude). */
function bitLength(magnitude: Uint8Array): number {
  const m = strip(magnitude);
  const top = m[0] ?? 0;
  return top === 0 ? 0 : (m.length - 1) * 8 + (32 - Math.clz32(top));
}

/** Why the signers' key policy refuses this key, or undefined. Assumes goPublicKeyError passed. */
export function keyPolicyError(spki: Uint8Array, policy: KeyPolicy): string | undefined {
  const s = readSpki(spki);
  if (!s) return 'key policy: unreadable public key';
  if (s.algorithm === OID_RSA) {
    const [n] = children(s.keyBits, expectTlv(s.keyBits, 0, TAG.SEQUENCE));
    const bits = n ? bitLength(value(s.keyBits, n)) : 0;
    return bits < policy.minRsaBits ? `key policy: RSA key of ${bits} bits is below the minimum of ${policy.minRsaBits}` : undefined;
  }
  if (s.algorithm === OID_EC) {
    const curve = s.params?.tlv.tag === TAG.OID ? GO_CURVES[decodeOid(value(spki, s.params.tlv))]?.name : undefined;
    if (curve !== undefined && ALLOWED_CURVES.includes(curve)) return undefined;
    return `key policy: ECDSA curve ${curve ?? 'unknown'} is not allowed (allowed: ${ALLOWED_CURVES.join(', ')}, Ed25519)`;
  }
  if (s.algorithm === OID_ED25519) return undefined;
  return `key policy: public key algorithm ${s.algorithm} is not allowed (allowed: RSA, ECDSA ${ALLOWED_CURVES.join(', ')}, Ed25519)`;
}
