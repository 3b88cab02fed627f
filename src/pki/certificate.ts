import { X509Certificate } from '@peculiar/x509';
import { TAG, children, decodeOid, decodeTime, expectTlv, value, whole, type Tlv } from './der.js';
import { PkiError } from './errors.js';
import { decodePemBlocks } from './pem.js';

/**
 * Every CERTIFICATE block of a PEM chain, validated the way Kubernetes validates
 * `status.certificate`: only CERTIFICATE blocks, no headers, each a parsable certificate, at least one.
 */
export function parseCertificatePem(pem: string): X509Certificate[] {
  return certificateDers(pem).map((der) => {
    try {
      return new X509Certificate(der);
    } catch (err) {
      throw new PkiError(`x509: malformed certificate: ${(err as Error).message}`);
    }
  });
}

/** The DER of each CERTIFICATE block, with the structural checks of parseCertificatePem. */
export function certificateDers(pem: string): Uint8Array[] {
  const blocks = decodePemBlocks(pem);
  if (blocks.length === 0) throw new PkiError('must contain at least one CERTIFICATE PEM block', 'pem');
  return blocks.map((b) => {
    if (b.type !== 'CERTIFICATE') throw new PkiError(`only CERTIFICATE PEM blocks are allowed, found "${b.type}"`, 'pem-type');
    if (Object.keys(b.headers).length > 0) throw new PkiError('no PEM block headers are permitted', 'pem-headers');
    if (b.der.length === 0) throw new PkiError('found CERTIFICATE PEM block containing 0 certificates');
    readCertificateInfo(b.der);
    return b.der;
  });
}

/** The raw pieces of a certificate the signer needs, read without a full ASN.1 decode. */
export interface CertificateInfo {
  der: Uint8Array;
  issuerDer: Uint8Array;
  subjectDer: Uint8Array;
  spkiDer: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** Extension values (the OCTET STRING contents) by dotted OID. */
  extensions: Map<string, { critical: boolean; value: Uint8Array }>;
}

export function readCertificateInfo(der: Uint8Array): CertificateInfo {
  try {
    const root = expectTlv(der, 0, TAG.SEQUENCE);
    if (root.end !== der.length) throw new PkiError('x509: trailing data');
    const [tbs] = children(der, root);
    if (tbs?.tag !== TAG.SEQUENCE) throw new PkiError('x509: malformed tbs certificate');
    const parts = children(der, tbs);
    const off = parts[0]?.tag === 0xa0 ? 1 : 0;
    const [, , issuer, validity, subject, spki] = parts.slice(off) as (Tlv | undefined)[];
    if (!issuer || !validity || !subject || !spki) throw new PkiError('x509: malformed tbs certificate');
    const [nb, na] = children(der, validity);
    if (!nb || !na) throw new PkiError('x509: malformed validity');
    return {
      der,
      issuerDer: whole(der, issuer),
      subjectDer: whole(der, subject),
      spkiDer: whole(der, spki),
      notBefore: decodeTime(der, nb),
      notAfter: decodeTime(der, na),
      extensions: readExtensions(der, parts.find((p) => p.tag === 0xa3)),
    };
  } catch (err) {
    if (err instanceof PkiError && err.message.startsWith('x509:')) throw err;
    throw new PkiError(`x509: malformed certificate: ${(err as Error).message}`);
  }
}

function readExtensions(der: Uint8Array, wrapper: Tlv | undefined): CertificateInfo['extensions'] {
  const out: CertificateInfo['extensions'] = new Map();
  if (!wrapper) return out;
  const [list] = children(der, wrapper);
  for (const ext of list ? children(der, list) : []) {
    const [id, second, third] = children(der, ext);
    const val = third ?? second;
    if (id?.tag !== TAG.OID || val?.tag !== TAG.OCTET_STRING) throw new PkiError('x509: malformed extension');
    const critical = third !== undefined && second?.tag === TAG.BOOLEAN && value(der, second)[0] !== 0;
    out.set(decodeOid(value(der, id)), { critical, value: value(der, val) });
  }
  return out;
}
