import crypto, { type KeyObject } from 'node:crypto';
import { BOOLEAN_TRUE, bitString, explicit, octetString, oid, seq, smallInteger, time, tlv, unsignedInteger } from './der.js';
import { signWith, type SignatureScheme } from './keys.js';

/** Everything that goes into one X.509 v3 certificate. */
export interface CertificateParts {
  issuerDer: Uint8Array;
  subjectDer: Uint8Array;
  spkiDer: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** Extension elements in emission order. */
  extensions: Uint8Array[];
  signingKey: KeyObject;
  scheme: SignatureScheme;
}

const VERSION_3 = explicit(0, smallInteger(2));

/** DER of a signed certificate (TBSCertificate, algorithm, signature) with a fresh random serial. */
export function buildSignedCertificate(p: CertificateParts): Buffer {
  const tbs = seq(
    VERSION_3,
    unsignedInteger(randomSerial()),
    p.scheme.algorithmIdentifier,
    p.issuerDer,
    seq(time(p.notBefore), time(p.notAfter)),
    p.subjectDer,
    p.spkiDer,
    explicit(3, seq(...p.extensions)),
  );
  return seq(tbs, p.scheme.algorithmIdentifier, bitString(signWith(p.signingKey, p.scheme, tbs)));
}

let pool = Buffer.alloc(0);
let poolPos = 0;

/**
 * 128 random bits, never all zero, so the serial is a positive integer below 2^128 (upstream draws
 * uniformly from [0, 2^128)). Drawn from a pooled CSPRNG buffer: one syscall per 256 serials.
 */
export function randomSerial(): Buffer {
  for (;;) {
    if (poolPos + 16 > pool.length) {
      pool = crypto.randomBytes(4096);
      poolPos = 0;
    }
    const s = pool.subarray(poolPos, poolPos + 16);
    poolPos += 16;
    if (s.some((b) => b !== 0)) return s;
  }
}

/** BasicConstraints, critical as Go emits it; a leaf carries an empty SEQUENCE (cA defaults to FALSE). */
export function basicConstraintsExtension(isCA: boolean): Buffer {
  return seq(oid('2.5.29.19'), BOOLEAN_TRUE, octetString(isCA ? seq(BOOLEAN_TRUE) : seq()));
}

export function subjectKeyIdExtension(keyId: Uint8Array): Buffer {
  return seq(oid('2.5.29.14'), octetString(octetString(keyId)));
}

export function authorityKeyIdExtension(keyId: Uint8Array): Buffer {
  return seq(oid('2.5.29.35'), octetString(seq(tlv(0x80, keyId))));
}

/** subjectAltName; critical when the subject is empty, as RFC 5280 (and Go) require. */
export function subjectAltNameExtension(generalNames: Uint8Array, subjectEmpty: boolean): Buffer {
  return subjectEmpty
    ? seq(oid('2.5.29.17'), BOOLEAN_TRUE, octetString(generalNames))
    : seq(oid('2.5.29.17'), octetString(generalNames));
}
