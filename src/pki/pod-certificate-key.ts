/**
 * The keys of PodCertificateRequests (KEP-4317) as the API server judges them: upstream's verdict on a
 * key type (with its refusal texts), the deprecated v1beta1 proof of possession (a signature over the
 * ASCII pod UID), and the stub PKCS#10 request a kubelet sends (for tests and simulated kubelets).
 * A signer's own key policy uses pod-key-types.ts.
 */
import crypto from 'node:crypto';
import type { PcrKeyType } from '../api/pod-certificates.js';
import { TAG, children, decodeOid, expectTlv, value } from './der.js';
import { describeSpki, importSpki } from './keys.js';
import { PkiError } from './errors.js';
import { goPublicKeyError } from './public-key.js';
import { createCertificateRequestPem } from './csr.js';
import { decodePemBlocks } from './pem.js';

const OID_EC = '1.2.840.10045.2.1';
const OID_RSA = '1.2.840.113549.1.1.1';
const OID_ED25519 = '1.3.101.112';
/** Go's curve names (elliptic.Curve.Params().Name), as upstream prints them. */
const EC_CURVES: Record<string, { go: string; keyType?: PcrKeyType }> = {
  '1.3.132.0.33': { go: 'P-224' },
  '1.2.840.10045.3.1.7': { go: 'P-256', keyType: 'ECDSAP256' },
  '1.3.132.0.34': { go: 'P-384', keyType: 'ECDSAP384' },
  '1.3.132.0.35': { go: 'P-521', keyType: 'ECDSAP521' },
};

/** What upstream's validation says of a key it will not take, and the value it prints with it. */
export interface KeyTypeRefusal {
  /** The bad value as Go prints it (`curve P-224`, `2048-bit modulus`), or undefined for the key bytes. */
  value: string | undefined;
  detail: string;
}

/** The outcome of looking at a request's public key. */
export type PcrKeyVerdict = { keyType: PcrKeyType } | { refusal: KeyTypeRefusal };

const UNKNOWN: KeyTypeRefusal = { value: undefined, detail: 'unknown public key type; supported types are Ed25519, ECDSA, and RSA' };

/** RSA modulus size as Go's PublicKey.Size()*8: the byte length of the modulus, in bits. */
function rsaModulusBits(keyBits: Uint8Array): number {
  const [n] = children(keyBits, expectTlv(keyBits, 0, TAG.SEQUENCE));
  if (!n) return 0;
  let m = value(keyBits, n);
  while (m.length > 0 && m[0] === 0) m = m.subarray(1);
  return m.length * 8;
}

function ecVerdict(curveOid: string | undefined): PcrKeyVerdict {
  const curve = curveOid === undefined ? undefined : EC_CURVES[curveOid];
  if (curve?.keyType) return { keyType: curve.keyType };
  // Upstream's text names two curves although P-521 is accepted.
  return { refusal: { value: `curve ${curve?.go ?? 'unknown'}`, detail: 'elliptic public keys must use curve P256 or P384' } };
}

function rsaVerdict(bits: number): PcrKeyVerdict {
  if (bits === 3072) return { keyType: 'RSA3072' };
  if (bits === 4096) return { keyType: 'RSA4096' };
  return { refusal: { value: `${bits}-bit modulus`, detail: 'RSA keys must have modulus size 3072 or 4096' } };
}

/**
 * The key type of a SubjectPublicKeyInfo (DER), or upstream's refusal: RSA 3072/4096, ECDSA
 * P-256/P-384/P-521 and Ed25519 are taken; throws PkiError when Go could not parse the key at all.
 */
export function pcrKeyVerdict(spki: Uint8Array): PcrKeyVerdict {
  const goError = goPublicKeyError(spki);
  if (goError !== undefined) throw new PkiError(goError, 'unsupported');
  const root = expectTlv(spki, 0, TAG.SEQUENCE);
  const [alg] = children(spki, root);
  if (alg?.tag !== TAG.SEQUENCE) throw new PkiError('x509: malformed subject public key info');
  const [algOid, params] = children(spki, alg);
  if (algOid?.tag !== TAG.OID) throw new PkiError('x509: malformed subject public key info');
  const oid = decodeOid(value(spki, algOid));
  if (oid === OID_ED25519) return { keyType: 'ED25519' };
  if (oid === OID_EC) return ecVerdict(params?.tag === TAG.OID ? decodeOid(value(spki, params)) : undefined);
  if (oid === OID_RSA) return rsaVerdict(rsaModulusBits(describeSpki(spki).keyBits));
  return { refusal: UNKNOWN };
}

/**
 * Whether `signature` proves possession of the key: Ed25519 over the ASCII pod UID, ECDSA (ASN.1)
 * and RSASSA-PSS (any salt length, as Go's VerifyPSS with nil options) over its SHA-256.
 */
export function verifyProofOfPossession(spki: Uint8Array, podUID: string, signature: Uint8Array): boolean {
  const key = importSpki(spki);
  const data = Buffer.from(podUID, 'utf8');
  try {
    switch (key.asymmetricKeyType) {
      case 'ed25519':
        return crypto.verify(null, data, key, signature);
      case 'ec':
        return crypto.verify('sha256', data, { key, dsaEncoding: 'der' }, signature);
      case 'rsa':
        return crypto.verify('sha256', data, { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_AUTO }, signature);
      default:
        return false;
    }
  } catch {
    return false;
  }
}

/** The proof of possession kubelet computes (the inverse of verifyProofOfPossession), for tests and simulated kubelets. */
export function signProofOfPossession(privateKey: crypto.KeyObject, podUID: string): Buffer {
  const data = Buffer.from(podUID, 'utf8');
  switch (privateKey.asymmetricKeyType) {
    case 'ed25519':
      return crypto.sign(null, data, privateKey);
    case 'ec':
      return crypto.sign('sha256', data, { key: privateKey, dsaEncoding: 'der' });
    case 'rsa':
      return crypto.sign('sha256', data, { key: privateKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_MAX_SIGN });
    default:
      throw new PkiError(`unsupported key type ${privateKey.asymmetricKeyType ?? 'unknown'}`, 'unsupported');
  }
}

/** A stub PKCS#10 request as kubelet makes one for spec.stubPKCS10Request: empty subject, signed by the key (DER). */
export async function createStubPkcs10Request(privateKeyPem: string): Promise<Buffer> {
  const block = decodePemBlocks(await createCertificateRequestPem({ privateKeyPem, commonName: '' }))[0];
  if (!block) throw new PkiError('no CERTIFICATE REQUEST block produced');
  return Buffer.from(block.der);
}
