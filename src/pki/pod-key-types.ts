/**
 * The key types of PodCertificateRequests, named as the API names them (the podCertificate
 * projection's keyType): what a public key is, so a signer's key policy can accept or refuse it.
 */
import crypto from 'node:crypto';
import { PCR_KEY_TYPES, type PcrKeyType } from '../api/pod-certificates.js';


const CURVES: Record<string, PcrKeyType> = { prime256v1: 'ECDSAP256', secp384r1: 'ECDSAP384', secp521r1: 'ECDSAP521' };

/** The key type of an SPKI (DER), or undefined when it is none of the API's key types. */
export function podKeyTypeOf(spkiDer: Uint8Array): PcrKeyType | undefined {
  let key: crypto.KeyObject;
  try {
    key = crypto.createPublicKey({ key: Buffer.from(spkiDer), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'ed25519':
      return 'ED25519';
    case 'ec':
      return CURVES[details.namedCurve ?? ''];
    case 'rsa':
      return details.modulusLength === 3072 ? 'RSA3072' : details.modulusLength === 4096 ? 'RSA4096' : undefined;
    default:
      return undefined;
  }
}

/** Parses a comma-separated key type list; unknown names go to `problems`. */
export function parsePcrKeyTypes(text: string, problems: string[] = []): PcrKeyType[] {
  const out: PcrKeyType[] = [];
  for (const name of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if ((PCR_KEY_TYPES as readonly string[]).includes(name)) out.push(name as PcrKeyType);
    else problems.push(`workloadSignerKeyTypes: unknown key type ${JSON.stringify(name)} (one of ${PCR_KEY_TYPES.join(', ')})`);
  }
  return out;
}
