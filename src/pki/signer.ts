import crypto, { type KeyObject } from 'node:crypto';
import { expectTlv, value, TAG } from './der.js';
import { certificateDers, readCertificateInfo } from './certificate.js';
import { PkiError } from './errors.js';
import { signatureSchemeFor, type SignatureScheme } from './keys.js';
import { authorityKeyIdExtension } from './tbs.js';

/** A CA's certificate and key as PEM. */
export interface CaMaterial {
  certPem: string;
  keyPem: string;
}

/** A CA ready for fast signing: key imported once, issuer name and AuthorityKeyIdentifier pre-encoded. */
export interface CaSigner {
  readonly kind: 'ca-signer';
  readonly certPem: string;
  readonly certDer: Uint8Array;
  readonly subjectDer: Uint8Array;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** 'ECDSA' | 'RSA' | 'Ed25519'. */
  readonly keyAlgorithm: string;
  readonly privateKey: KeyObject;
  readonly scheme: SignatureScheme;
  /** Taken from the CA's SubjectKeyIdentifier; absent when the CA has none (as upstream). */
  readonly authorityKeyIdExtension?: Buffer;
}

/** Anything that hands out the current signer (e.g. a CaFileProvider that reloads files). */
export interface CaSignerSource {
  signer(): CaSigner;
}

export type CaLike = CaMaterial | CaSigner | CaSignerSource;

const KEY_TYPES: Record<string, string> = { ec: 'ECDSA', rsa: 'RSA', ed25519: 'Ed25519' };

/**
 * Parses and checks a CA pair: the first certificate of the cert PEM, a private key (PKCS#1, SEC1 or
 * PKCS#8) that can sign and that matches the certificate's public key.
 */
export function prepareCaSigner(material: CaMaterial): CaSigner {
  const [certDer] = certificateDers(material.certPem);
  const info = readCertificateInfo(certDer as Uint8Array);
  let privateKey: KeyObject;
  try {
    privateKey = crypto.createPrivateKey(material.keyPem);
  } catch (err) {
    throw new PkiError(`tls: failed to parse private key: ${(err as Error).message}`, 'ca');
  }
  const keyAlgorithm = KEY_TYPES[privateKey.asymmetricKeyType ?? ''];
  if (!keyAlgorithm) throw new PkiError('key did not implement crypto.Signer', 'ca');
  const fromKey = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const fromCert = crypto.createPublicKey({ key: Buffer.from(info.spkiDer), format: 'der', type: 'spki' }).export({ type: 'spki', format: 'der' });
  if (!fromKey.equals(fromCert)) throw new PkiError('tls: private key does not match public key', 'ca');
  const skid = info.extensions.get('2.5.29.14');
  const signer: CaSigner = {
    kind: 'ca-signer',
    certPem: material.certPem,
    certDer: info.der,
    subjectDer: info.subjectDer,
    notBefore: info.notBefore,
    notAfter: info.notAfter,
    keyAlgorithm,
    privateKey,
    scheme: signatureSchemeFor(privateKey),
  };
  if (!skid) return signer;
  const keyId = value(skid.value, expectTlv(skid.value, 0, TAG.OCTET_STRING));
  return { ...signer, authorityKeyIdExtension: authorityKeyIdExtension(keyId) };
}

const prepared = new Map<string, CaSigner>();

/** The signer for any CA form; plain PEM material is prepared once and memoised (a few CAs at most). */
export function resolveCaSigner(ca: CaLike): CaSigner {
  if ('kind' in ca && ca.kind === 'ca-signer') return ca;
  if ('signer' in ca) return ca.signer();
  const material = ca as CaMaterial;
  const key = `${material.certPem}\0${material.keyPem}`;
  let signer = prepared.get(key);
  if (!signer) {
    signer = prepareCaSigner(material);
    if (prepared.size >= 16) prepared.clear();
    prepared.set(key, signer);
  }
  return signer;
}
