import crypto, { type KeyObject } from 'node:crypto';
import { TAG, bitString, children, decodeOid, expectTlv, explicit, malformed, octetString, oid, readTlv, seq, set, smallInteger, value, whole, type Tlv } from './der.js';
import { PkiError } from './errors.js';
import { describeSpki, importSpki, signWith, signatureSchemeFor } from './keys.js';
import { encodeName, parseName, type ParsedName } from './name.js';
import { goPublicKey } from './public-key.js';
import { decodePemBlocks, encodePem } from './pem.js';
import { encodeSubjectAltNames, parseSubjectAltNames } from './san.js';

export interface ParsedCsr {
  der: Uint8Array;
  /** Parsed subject; pass it as IssueRequest.subject to re-encode it the way Kubernetes' signer does. */
  subject: ParsedName;
  /** The subject Name exactly as it appears in the request. */
  subjectDer: Uint8Array;
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  publicKeyAlgorithm: 'ECDSA' | 'RSA' | 'Ed25519' | string;
  /** 'P-256' | 'P-384' | 'P-521' for ECDSA keys. */
  publicKeyCurve?: string;
  /** SubjectPublicKeyInfo DER. */
  publicKeyDer: Uint8Array;
  /** Dotted OID of the request's signature algorithm. */
  signatureAlgorithm: string;
  /**
   * The public key, when the parse imported it (checking an EC key as Go does, or verifying the
   * signature): verifyCertificateRequestSignature reuses it instead of importing it again.
   */
  publicKey?: KeyObject;
}

export interface ParseCsrOptions {
  /** Verify the request's self-signature (default true). Skip only when it was verified before. */
  verifySignature?: boolean;
}

const PEM_TYPE_MESSAGE = 'PEM block type must be CERTIFICATE REQUEST';
const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SAN = '2.5.29.17';

/**
 * Parses the first PEM block of a Kubernetes `spec.request` as PKCS#10, like upstream (which uses
 * pem.Decode once: a first block of another type is an error, anything after the first block is ignored).
 */
export function parseCertificateRequestPem(pem: string, opts: ParseCsrOptions = {}): ParsedCsr {
  const block = decodePemBlocks(pem)[0];
  if (!block) throw new PkiError(PEM_TYPE_MESSAGE, 'pem');
  if (block.type !== 'CERTIFICATE REQUEST') throw new PkiError(PEM_TYPE_MESSAGE, 'pem-type');
  return parseCertificateRequestDer(block.der, opts);
}

interface SigAlg {
  key: string;
  hash: string | null;
  name: string;
}

const SIGNATURE_ALGORITHMS: Record<string, SigAlg> = {
  '1.2.840.113549.1.1.5': { key: 'RSA', hash: 'sha1', name: 'SHA1-RSA' },
  '1.2.840.113549.1.1.11': { key: 'RSA', hash: 'sha256', name: 'SHA256-RSA' },
  '1.2.840.113549.1.1.12': { key: 'RSA', hash: 'sha384', name: 'SHA384-RSA' },
  '1.2.840.113549.1.1.13': { key: 'RSA', hash: 'sha512', name: 'SHA512-RSA' },
  '1.2.840.10045.4.1': { key: 'ECDSA', hash: 'sha1', name: 'ECDSA-SHA1' },
  '1.2.840.10045.4.3.2': { key: 'ECDSA', hash: 'sha256', name: 'ECDSA-SHA256' },
  '1.2.840.10045.4.3.3': { key: 'ECDSA', hash: 'sha384', name: 'ECDSA-SHA384' },
  '1.2.840.10045.4.3.4': { key: 'ECDSA', hash: 'sha512', name: 'ECDSA-SHA512' },
  '1.3.101.112': { key: 'Ed25519', hash: null, name: 'Ed25519' },
};
const INSECURE: Record<string, string> = { '1.2.840.113549.1.1.4': 'MD5-RSA', '1.2.840.113549.1.1.2': 'MD2-RSA' };
const FAILURE_TEXT: Record<string, string> = {
  RSA: 'crypto/rsa: verification error',
  ECDSA: 'x509: ECDSA verification failure',
  Ed25519: 'x509: Ed25519 verification failure',
};

export function parseCertificateRequestDer(der: Uint8Array, opts: ParseCsrOptions = {}): ParsedCsr {
  const t = csrStructure(der);
  const publicKeyDer = whole(der, t.spki);
  const key = goParsedKey(publicKeyDer);
  const info = describeSpki(publicKeyDer);
  const sigOidTlv = readTlv(der, t.sigAlg.valueStart, t.sigAlg.end);
  if (sigOidTlv.tag !== TAG.OID) throw malformed('signature algorithm is not an OID');
  const signatureAlgorithm = decodeOid(value(der, sigOidTlv));
  const parsed: ParsedCsr = {
    der,
    subject: parseName(der, t.subject),
    subjectDer: whole(der, t.subject),
    ...sansOf(der, t.attributes),
    publicKeyAlgorithm: info.algorithm,
    publicKeyDer,
    signatureAlgorithm,
  };
  if (info.curve) parsed.publicKeyCurve = info.curve;
  const publicKey = opts.verifySignature === false ? key : verifySignature(whole(der, t.info), signatureAlgorithm, value(der, t.signature), { der: publicKeyDer, info, key });
  if (publicKey) parsed.publicKey = publicKey;
  return parsed;
}

/**
 * As Go's parser: a key Go cannot load fails the request before anything else is looked at.
 * Returns the key when checking it imported it.
 */
function goParsedKey(spki: Uint8Array): KeyObject | undefined {
  const verdict = goPublicKey(spki);
  if (verdict.error !== undefined) throw new PkiError(verdict.error, 'unsupported');
  return verdict.key;
}

/**
 * Verifies the self-signature of a request that parsed before without verification (its `der`, or
 * the parse itself, whose imported key is then reused), with the same errors
 * parseCertificateRequestDer would have thrown for it: a signer can reuse a parse made for the
 * approver and still check the signature itself, without parsing again.
 */
export function verifyCertificateRequestSignature(request: Uint8Array | Readonly<Pick<ParsedCsr, 'der' | 'publicKey'>>): void {
  const { der, publicKey } = request instanceof Uint8Array ? { der: request, publicKey: undefined } : request;
  const t = csrStructure(der);
  const publicKeyDer = whole(der, t.spki);
  const sigOidTlv = readTlv(der, t.sigAlg.valueStart, t.sigAlg.end);
  if (sigOidTlv.tag !== TAG.OID) throw malformed('signature algorithm is not an OID');
  verifySignature(whole(der, t.info), decodeOid(value(der, sigOidTlv)), value(der, t.signature), { der: publicKeyDer, info: describeSpki(publicKeyDer), key: publicKey });
}

const bad = (): PkiError => new PkiError('x509: malformed certificate request');

function csrRoot(der: Uint8Array): Tlv {
  let root: Tlv;
  try {
    root = expectTlv(der, 0, TAG.SEQUENCE);
  } catch {
    throw bad();
  }
  if (root.end !== der.length) throw new PkiError('asn1: syntax error: trailing data');
  return root;
}

/** The top-level elements of a CertificationRequest (RFC 2986), shape-checked. */
function csrStructure(der: Uint8Array): Record<'info' | 'sigAlg' | 'signature' | 'subject' | 'spki', Tlv> & { attributes?: Tlv } {
  const root = csrRoot(der);
  const [info, sigAlg, signature] = children(der, root);
  if (info?.tag !== TAG.SEQUENCE || sigAlg?.tag !== TAG.SEQUENCE || signature?.tag !== TAG.BIT_STRING) throw bad();
  const [version, subject, spki, attributes] = children(der, info);
  if (version?.tag !== TAG.INTEGER || subject?.tag !== TAG.SEQUENCE || spki?.tag !== TAG.SEQUENCE) throw bad();
  return attributes ? { info, sigAlg, signature, subject, spki, attributes } : { info, sigAlg, signature, subject, spki };
}

/** The requested SANs of each kind, empty when the request has no attributes or no SAN extension. */
function sansOf(der: Uint8Array, attrs: Tlv | undefined): Pick<ParsedCsr, 'dnsNames' | 'ipAddresses' | 'emailAddresses' | 'uris'> {
  const sans = attrs?.tag === 0xa0 ? requestedSans(der, attrs) : undefined;
  return { dnsNames: sans?.dnsNames ?? [], ipAddresses: sans?.ipAddresses ?? [], emailAddresses: sans?.emailAddresses ?? [], uris: sans?.uris ?? [] };
}

/** The SAN extension from the extensionRequest attribute; other requested extensions are ignored. */
function requestedSans(der: Uint8Array, attrs: Tlv): ReturnType<typeof parseSubjectAltNames> | undefined {
  for (const attr of children(der, attrs)) {
    const [typeTlv, valuesTlv] = children(der, attr);
    if (typeTlv?.tag !== TAG.OID || valuesTlv?.tag !== TAG.SET) throw new PkiError('x509: malformed certificate request attribute');
    if (decodeOid(value(der, typeTlv)) !== OID_EXTENSION_REQUEST) continue;
    for (const exts of children(der, valuesTlv)) {
      for (const ext of children(der, exts)) {
        const parts = children(der, ext);
        const idTlv = parts[0];
        const valTlv = parts[parts.length - 1];
        if (idTlv?.tag !== TAG.OID || valTlv?.tag !== TAG.OCTET_STRING) throw new PkiError('x509: malformed extension');
        if (decodeOid(value(der, idTlv)) === OID_SAN) return parseSubjectAltNames(value(der, valTlv));
      }
    }
  }
  return undefined;
}

/** The request's public key: its SPKI, what the SPKI says, and the key when it was imported already. */
interface RequestKey {
  der: Uint8Array;
  info: ReturnType<typeof describeSpki>;
  key: KeyObject | undefined;
}

/** Throws Go's error unless `sigBits` is the key's signature of `tbs`; returns the key, imported unless given. */
function verifySignature(tbs: Uint8Array, sigOid: string, sigBits: Uint8Array, { der: spki, info, key: imported }: RequestKey): KeyObject {
  const insecure = INSECURE[sigOid];
  if (insecure) throw new PkiError(`x509: cannot verify signature: insecure algorithm ${insecure}`, 'signature');
  const alg = SIGNATURE_ALGORITHMS[sigOid];
  if (!alg) throw new PkiError('x509: cannot verify signature: algorithm unimplemented', 'unsupported');
  if (alg.key !== info.algorithm) {
    throw new PkiError(`x509: signature algorithm specifies an ${alg.key} public key, but have public key of type ${info.algorithm}`, 'signature');
  }
  if (sigBits[0] !== 0) throw new PkiError('x509: malformed signature', 'signature');
  const key = imported ?? importSpki(spki, info);
  let ok: boolean;
  try {
    ok = crypto.verify(alg.hash, tbs, key, sigBits.subarray(1));
  } catch {
    ok = false;
  }
  if (!ok) throw new PkiError(FAILURE_TEXT[alg.key] ?? 'x509: signature verification failure', 'signature');
  return key;
}

export interface CreateCsrOptions {
  privateKeyPem: string;
  commonName: string;
  organizations?: string[];
  organizationalUnits?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  emailAddresses?: string[];
  uris?: string[];
}

/** A signed PKCS#10 request in PEM (for tests, the demo and benchmarks). */
export async function createCertificateRequestPem(opts: CreateCsrOptions): Promise<string> {
  const key = crypto.createPrivateKey(opts.privateKeyPem);
  const spki = crypto.createPublicKey(key).export({ type: 'spki', format: 'der' });
  const subject = encodeName({ commonName: opts.commonName, organizations: opts.organizations ?? [], organizationalUnits: opts.organizationalUnits ?? [] });
  const sans = encodeSubjectAltNames(opts);
  const attributes = sans
    ? explicit(0, seq(oid(OID_EXTENSION_REQUEST), set(seq(seq(oid(OID_SAN), octetString(sans))))))
    : explicit(0);
  const cri = seq(smallInteger(0), subject, spki, attributes);
  const scheme = signatureSchemeFor(key);
  return encodePem('CERTIFICATE REQUEST', seq(cri, scheme.algorithmIdentifier, bitString(signWith(key, scheme, cri))));
}
