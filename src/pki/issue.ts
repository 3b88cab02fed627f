import { encodeName, type SubjectFields } from './name.js';
import { PkiError } from './errors.js';
import { describeSpki } from './keys.js';
import { decodePemBlocks, encodePem } from './pem.js';
import { encodeSubjectAltNames } from './san.js';
import { resolveCaSigner, type CaLike } from './signer.js';
import { basicConstraintsExtension, buildSignedCertificate, subjectAltNameExtension } from './tbs.js';
import { usageExtensions, type KeyUsage } from './usages.js';

export { KEY_USAGES, isKnownKeyUsage, mapUsages, type KeyUsage, type KnownKeyUsage } from './usages.js';
export { certificateLifetime, requestedDuration } from './lifetime.js';

export interface IssueRequest {
  /** Subject fields (re-encoded in Go's attribute order; a ParsedCsr.subject fits) or a raw Name DER. */
  subject: SubjectFields | { der: Uint8Array };
  publicKeyDer?: Uint8Array;
  publicKeyPem?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  emailAddresses?: string[];
  uris?: string[];
  usages: KeyUsage[];
  notBefore: Date;
  notAfter: Date;
  isCA?: boolean;
}

/** PEM of a certificate for `req`, signed by `ca` (see issueCertificateDer). */
export async function issueCertificate(ca: CaLike, req: IssueRequest): Promise<string> {
  return encodePem('CERTIFICATE', issueCertificateDer(ca, req));
}

/**
 * Builds and signs a certificate the way Kubernetes' CA does: subject and SANs from the request, the
 * CA's subject as issuer, KeyUsage/ExtKeyUsage from the usages, BasicConstraints, the CA's key id as
 * AuthorityKeyIdentifier, a random 128-bit serial, no other extensions. Synchronous.
 */
export function issueCertificateDer(ca: CaLike, req: IssueRequest): Buffer {
  const signer = resolveCaSigner(ca);
  const spkiDer = publicKey(req);
  const subjectDer = 'der' in req.subject ? req.subject.der : encodeName(req.subject);
  const extensions = [...usageExtensions(req.usages), basicConstraintsExtension(req.isCA ?? false)];
  if (signer.authorityKeyIdExtension) extensions.push(signer.authorityKeyIdExtension);
  const sans = encodeSubjectAltNames(req);
  if (sans) extensions.push(subjectAltNameExtension(sans, subjectDer.length <= 2));
  return buildSignedCertificate({
    issuerDer: signer.subjectDer,
    subjectDer,
    spkiDer,
    notBefore: req.notBefore,
    notAfter: req.notAfter,
    extensions,
    signingKey: signer.privateKey,
    scheme: signer.scheme,
  });
}

function publicKey(req: IssueRequest): Uint8Array {
  if (req.publicKeyDer) return req.publicKeyDer;
  if (req.publicKeyPem === undefined) throw new PkiError('a public key (publicKeyDer or publicKeyPem) is required', 'malformed');
  const block = decodePemBlocks(req.publicKeyPem)[0];
  if (block?.type !== 'PUBLIC KEY') throw new PkiError('publicKeyPem must hold a PUBLIC KEY block', 'pem-type');
  describeSpki(block.der);
  return block.der;
}
