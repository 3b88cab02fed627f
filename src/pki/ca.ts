import crypto from 'node:crypto';
import { encodeName } from './name.js';
import { describeSpki, generateKeyPair, signatureSchemeFor, type KeyAlgorithm } from './keys.js';
import { encodePem } from './pem.js';
import { basicConstraintsExtension, buildSignedCertificate, subjectKeyIdExtension } from './tbs.js';
import { usageExtensions } from './usages.js';
import type { CaMaterial } from './signer.js';

export type { CaMaterial, CaSigner, CaSignerSource, CaLike } from './signer.js';
export { prepareCaSigner, resolveCaSigner } from './signer.js';
export { CaFileProvider, type CaFileProviderOptions, type CaReloadEvent } from './ca-file-provider.js';

const DAY_MS = 86_400_000;

export interface CreateCaOptions {
  commonName: string;
  /** Default 3650 (kubeadm's ten years). */
  validityDays?: number;
  /** Default ECDSA-P256. */
  keyAlgorithm?: KeyAlgorithm;
  now?: Date;
}

/**
 * A self-signed CA like kubeadm's: subject CN only, BasicConstraints CA:TRUE, KeyUsage digital signature,
 * key encipherment and cert sign, and a SubjectKeyIdentifier (SHA-1 of the key, RFC 5280 method 1)
 * so issued certificates get an AuthorityKeyIdentifier.
 */
export async function createCertificateAuthority(opts: CreateCaOptions): Promise<CaMaterial> {
  const { privateKeyPem } = generateKeyPair(opts.keyAlgorithm ?? 'ECDSA-P256');
  const key = crypto.createPrivateKey(privateKeyPem);
  const spkiDer = crypto.createPublicKey(key).export({ type: 'spki', format: 'der' });
  const keyId = crypto.createHash('sha1').update(describeSpki(spkiDer).keyBits).digest();
  const name = encodeName({ commonName: opts.commonName });
  const notBefore = opts.now ?? new Date();
  const der = buildSignedCertificate({
    issuerDer: name,
    subjectDer: name,
    spkiDer,
    notBefore,
    notAfter: new Date(notBefore.getTime() + (opts.validityDays ?? 3650) * DAY_MS),
    extensions: [
      ...usageExtensions(['digital signature', 'key encipherment', 'cert sign']),
      basicConstraintsExtension(true),
      subjectKeyIdExtension(keyId),
    ],
    signingKey: key,
    scheme: signatureSchemeFor(key),
  });
  return { certPem: encodePem('CERTIFICATE', der), keyPem: privateKeyPem };
}
