/**
 * Service-account signing and verification keys. The JWS algorithm follows from the key (RS256 for
 * RSA, ES256/384/512 by curve) and the `kid` is derived from the public key exactly as
 * kube-apiserver does (base64url SHA-256 of the PKIX DER), so tokens and JWKS documents match what
 * clients of a real cluster see.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

export interface VerificationKey {
  kid: string;
  alg: SigningAlgorithm;
  publicKey: KeyObject;
}

export interface SigningKey extends VerificationKey {
  privateKey: KeyObject;
}

const CURVE_ALG: Record<string, SigningAlgorithm> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};

/** The JWS algorithm a key signs with; other key types are refused at load time. */
export function algorithmFor(key: KeyObject): SigningAlgorithm {
  if (key.asymmetricKeyType === 'rsa') {
    // jose refuses RSA keys under 2048 bits, and so do we, at configuration time rather than per token.
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < 2048) throw new Error(`service account RSA key must be at least 2048 bits, got ${bits}`);
    return 'RS256';
  }
  if (key.asymmetricKeyType === 'ec') {
    const alg = CURVE_ALG[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (alg) return alg;
  }
  throw new Error(`unsupported service account key type ${key.asymmetricKeyType ?? 'unknown'}`);
}

/** kube-apiserver's key id: base64url (no padding) of SHA-256 over the PKIX DER public key. */
export function keyIdFor(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

function toPrivate(key: KeyObject | string): KeyObject {
  const k = typeof key === 'string' ? createPrivateKey(key) : key;
  if (k.type !== 'private') throw new Error('service account signing key must be a private key');
  return k;
}

function toPublic(key: KeyObject | string): KeyObject {
  if (typeof key !== 'string') return key.type === 'private' ? createPublicKey(key) : key;
  return createPublicKey(key);
}

export function loadSigningKey(key: KeyObject | string): SigningKey {
  const privateKey = toPrivate(key);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, alg: algorithmFor(publicKey), kid: keyIdFor(publicKey) };
}

/** A verification-only key (a rotated-out signer, or another apiserver's key); PEM or KeyObject. */
export function loadVerificationKey(key: KeyObject | string): VerificationKey {
  const publicKey = toPublic(key);
  if (publicKey.type !== 'public') throw new Error('service account verification key must be asymmetric');
  return { publicKey, alg: algorithmFor(publicKey), kid: keyIdFor(publicKey) };
}
