import crypto, { type KeyObject } from 'node:crypto';
import { NULL, TAG, children, decodeOid, expectTlv, oid, seq, value } from './der.js';
import { PkiError } from './errors.js';

export type KeyAlgorithm = 'ECDSA-P256' | 'ECDSA-P384' | 'RSA-2048' | 'Ed25519';

/** A fresh key pair as PKCS#8 / SPKI PEM (default ECDSA P-256, what kubelets use). */
export function generateKeyPair(alg: KeyAlgorithm = 'ECDSA-P256'): { privateKeyPem: string; publicKeyPem: string } {
  const publicKeyEncoding = { type: 'spki', format: 'pem' } as const;
  const privateKeyEncoding = { type: 'pkcs8', format: 'pem' } as const;
  switch (alg) {
    case 'ECDSA-P256':
    case 'ECDSA-P384': {
      const namedCurve = alg === 'ECDSA-P256' ? 'P-256' : 'P-384';
      return pems(crypto.generateKeyPairSync('ec', { namedCurve, publicKeyEncoding, privateKeyEncoding }));
    }
    case 'RSA-2048':
      return pems(crypto.generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding, privateKeyEncoding }));
    case 'Ed25519':
      return pems(crypto.generateKeyPairSync('ed25519', { publicKeyEncoding, privateKeyEncoding }));
    default:
      throw new PkiError(`unsupported key algorithm ${JSON.stringify(alg)}`, 'unsupported');
  }
}

const pems = (k: { privateKey: string; publicKey: string }): { privateKeyPem: string; publicKeyPem: string } => ({
  privateKeyPem: k.privateKey,
  publicKeyPem: k.publicKey,
});

const OID_EC = '1.2.840.10045.2.1';
const OID_RSA = '1.2.840.113549.1.1.1';
const OID_ED25519 = '1.3.101.112';
const CURVES: Record<string, { crv: string; hash: string; sigOid: string }> = {
  '1.2.840.10045.3.1.7': { crv: 'P-256', hash: 'sha256', sigOid: '1.2.840.10045.4.3.2' },
  '1.3.132.0.34': { crv: 'P-384', hash: 'sha384', sigOid: '1.2.840.10045.4.3.3' },
  '1.3.132.0.35': { crv: 'P-521', hash: 'sha512', sigOid: '1.2.840.10045.4.3.4' },
};

/** What an SPKI says about its key, without importing it. */
export interface SpkiInfo {
  /** 'ECDSA' | 'RSA' | 'Ed25519', or the algorithm OID when unknown. */
  algorithm: string;
  /** JOSE curve name for EC keys ('P-256', ...). */
  curve?: string;
  /** The subjectPublicKey BIT STRING contents (without the unused-bits byte). */
  keyBits: Uint8Array;
}

export function describeSpki(spki: Uint8Array): SpkiInfo {
  const root = expectTlv(spki, 0, TAG.SEQUENCE);
  const [algTlv, bitsTlv] = children(spki, root);
  if (!algTlv || !bitsTlv || bitsTlv.tag !== TAG.BIT_STRING || algTlv.tag !== TAG.SEQUENCE) {
    throw new PkiError('x509: malformed subject public key info');
  }
  const [algOid, params] = children(spki, algTlv);
  if (!algOid || algOid.tag !== TAG.OID) throw new PkiError('x509: malformed subject public key info');
  const alg = decodeOid(value(spki, algOid));
  const keyBits = value(spki, bitsTlv).subarray(1);
  if (alg === OID_EC) {
    const curve = params?.tag === TAG.OID ? CURVES[decodeOid(value(spki, params))]?.crv : undefined;
    return curve ? { algorithm: 'ECDSA', curve, keyBits } : { algorithm: 'ECDSA', keyBits };
  }
  if (alg === OID_RSA) return { algorithm: 'RSA', keyBits };
  if (alg === OID_ED25519) return { algorithm: 'Ed25519', keyBits };
  return { algorithm: alg, keyBits };
}

const b64u = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64url');

/**
 * Imports an SPKI public key. Goes through JWK when it can: under OpenSSL 3.0 (Node 22) a JWK import is
 * 2x (EC) to 7-14x (Ed25519, RSA) cheaper than a DER SPKI import, and every CSR check pays one import;
 * under OpenSSL 3.5 (Node 24) the two cost the same within 15%.
 */
export function importSpki(spki: Uint8Array, info: SpkiInfo = describeSpki(spki)): KeyObject {
  try {
    const bits = info.keyBits;
    if (info.algorithm === 'ECDSA' && info.curve && bits[0] === 0x04 && bits.length % 2 === 1) {
      const half = (bits.length - 1) / 2;
      const jwk = { kty: 'EC', crv: info.curve, x: b64u(bits.subarray(1, 1 + half)), y: b64u(bits.subarray(1 + half)) };
      return crypto.createPublicKey({ key: jwk, format: 'jwk' });
    }
    if (info.algorithm === 'RSA') {
      const rsa = expectTlv(bits, 0, TAG.SEQUENCE);
      const [n, e] = children(bits, rsa);
      if (n?.tag === TAG.INTEGER && e?.tag === TAG.INTEGER) {
        const strip = (b: Uint8Array): Uint8Array => (b[0] === 0 ? b.subarray(1) : b);
        const jwk = { kty: 'RSA', n: b64u(strip(value(bits, n))), e: b64u(strip(value(bits, e))) };
        return crypto.createPublicKey({ key: jwk, format: 'jwk' });
      }
    }
    if (info.algorithm === 'Ed25519' && bits.length === 32) {
      return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64u(bits) }, format: 'jwk' });
    }
    return crypto.createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  } catch (err) {
    if (err instanceof PkiError) throw err;
    throw new PkiError(`x509: invalid public key: ${(err as Error).message}`);
  }
}

/** How a given private key signs certificates and CSRs: the AlgorithmIdentifier DER and the digest. */
export interface SignatureScheme {
  algorithmIdentifier: Buffer;
  /** Digest for crypto.sign; null for Ed25519. */
  hash: string | null;
}

/** Go's choice for a signer key: SHA256-RSA, ECDSA with the curve's hash, or Ed25519. */
export function signatureSchemeFor(key: KeyObject): SignatureScheme {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') return { algorithmIdentifier: seq(oid('1.2.840.113549.1.1.11'), NULL), hash: 'sha256' };
  if (type === 'ed25519') return { algorithmIdentifier: seq(oid(OID_ED25519)), hash: null };
  if (type === 'ec') {
    const named = key.asymmetricKeyDetails?.namedCurve;
    const curve = Object.values(CURVES).find((c) => c.crv === JOSE_CURVE[named ?? '']);
    if (curve) return { algorithmIdentifier: seq(oid(curve.sigOid)), hash: curve.hash };
  }
  throw new PkiError(`unsupported signing key type ${type ?? 'unknown'}`, 'unsupported');
}

const JOSE_CURVE: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/** Signs `data` with the scheme's digest; ECDSA signatures come out DER-encoded, as X.509 wants. */
export function signWith(key: KeyObject, scheme: SignatureScheme, data: Uint8Array): Buffer {
  return crypto.sign(scheme.hash, data, key);
}
