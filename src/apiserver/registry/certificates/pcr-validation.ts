/**
 * PodCertificateRequest validation on create and on main-resource update, as upstream's
 * pkg/apis/certificates/validation: who the request is for (pod, ServiceAccount and node names and
 * UIDs), the signer, maxExpirationSeconds within the signer's bounds, and the key: a stub PKCS#10
 * request whose self-signature proves possession, plus (v1beta1 only, deprecated) pkixPublicKey with
 * a proofOfPossession over the pod UID, which must then be the same key. Spec is immutable.
 */
import type { KObject } from '../../../api/meta.js';
import {
  PCR_MAX_KEY_MATERIAL_BYTES,
  PCR_MIN_MAX_EXPIRATION_SECONDS,
  maxMaxExpirationSeconds,
  type PodCertificateRequestSpecV1beta1,
} from '../../../api/pod-certificates.js';
import { deepEqual } from '../../../lib/json-value.js';
import { parseCertificateRequestDer } from '../../../pki/csr.js';
import { pcrKeyVerdict, verifyProofOfPossession } from '../../../pki/pod-certificate-key.js';
import { type FieldError, OMIT_VALUE, invalid, required, tooLong } from '../../http/field-errors.js';
import { validateSubdomainName } from '../../validation/names.js';
import { validateAnnotations } from '../../validation/object-meta.js';
import { fieldBytes, goBytesLiteral } from './bytes.js';
import { validateSignerName } from './signer-name.js';

const MAX_UID_LENGTH = 128;
const STUB = 'spec.stubPKCS10Request';
const PKIX = 'spec.pkixPublicKey';
const POP = 'spec.proofOfPossession';

export const pcrSpecOf = (obj: KObject): Partial<PodCertificateRequestSpecV1beta1> => (obj.spec ?? {}) as Partial<PodCertificateRequestSpecV1beta1>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Name fields: DNS subdomains (ValidatePodName, ValidateServiceAccountName, ValidateNodeName). */
function nameErrors(field: string, value: string): FieldError[] {
  return validateSubdomainName(value, false).map((m) => invalid(field, value, m));
}

function uidErrors(field: string, value: string): FieldError[] {
  if (value.length === 0) return [invalid(field, value, 'must not be empty')];
  if (value.length > MAX_UID_LENGTH) return [tooLong(field, MAX_UID_LENGTH)];
  return [];
}

function maxExpirationErrors(spec: Partial<PodCertificateRequestSpecV1beta1>): FieldError[] {
  const seconds = spec.maxExpirationSeconds;
  if (seconds === undefined || seconds === null) return [required('spec.maxExpirationSeconds', 'must be set')];
  const max = maxMaxExpirationSeconds(str(spec.signerName));
  if (seconds < PCR_MIN_MAX_EXPIRATION_SECONDS || seconds > max) {
    return [invalid('spec.maxExpirationSeconds', seconds, `must be in the range [${PCR_MIN_MAX_EXPIRATION_SECONDS}, ${max}]`)];
  }
  return [];
}

/** A key type check against `field`; the key's bytes are what Go prints when the type is unknown. */
function keyTypeErrors(field: string, spki: Uint8Array): FieldError[] {
  let verdict: ReturnType<typeof pcrKeyVerdict>;
  try {
    verdict = pcrKeyVerdict(spki);
  } catch {
    return [invalid(field, { goSyntax: goBytesLiteral(spki) }, 'must be a valid PKIX-serialized public key')];
  }
  if ('keyType' in verdict) return [];
  const { value, detail } = verdict.refusal;
  return [invalid(field, value ?? { goSyntax: goBytesLiteral(spki) }, detail)];
}

/**
 * The stub request: a DER PKCS#10 request (Go's x509.ParseCertificateRequest) whose self-signature
 * verifies, for a supported key type. Returns its public key when it is acceptable.
 */
function stubRequestErrors(stub: Buffer): { errs: FieldError[]; spki?: Uint8Array } {
  if (stub.length === 0) return { errs: [required(STUB, 'must be set')] };
  if (stub.length > PCR_MAX_KEY_MATERIAL_BYTES) return { errs: [tooLong(STUB, PCR_MAX_KEY_MATERIAL_BYTES)] };
  let spki: Uint8Array;
  try {
    spki = parseCertificateRequestDer(stub).publicKeyDer;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { errs: [invalid(STUB, OMIT_VALUE, `must be a valid PKCS#10 certificate signing request signed by the subject key: ${why}`)] };
  }
  const errs = keyTypeErrors(STUB, spki);
  return errs.length > 0 ? { errs } : { errs, spki };
}

/**
 * The deprecated pair (v1beta1): both or neither. When given, the key parses, is of a supported
 * type, is the stub request's key, and the proof of possession verifies over the pod UID.
 */
function legacyKeyErrors(spec: Partial<PodCertificateRequestSpecV1beta1>, stubKey: Uint8Array | undefined): FieldError[] {
  const pkix = fieldBytes(spec.pkixPublicKey);
  const pop = fieldBytes(spec.proofOfPossession);
  if (pkix.length === 0 && pop.length === 0) return [];
  if (pkix.length > PCR_MAX_KEY_MATERIAL_BYTES) return [tooLong(PKIX, PCR_MAX_KEY_MATERIAL_BYTES)];
  if (pop.length > PCR_MAX_KEY_MATERIAL_BYTES) return [tooLong(POP, PCR_MAX_KEY_MATERIAL_BYTES)];
  if (pkix.length === 0) return [required(PKIX, 'must be set together with proofOfPossession')];
  if (pop.length === 0) return [required(POP, 'must be set together with pkixPublicKey')];
  const typeErrs = keyTypeErrors(PKIX, pkix);
  if (typeErrs.length > 0) return typeErrs;
  if (stubKey && !Buffer.from(stubKey).equals(pkix)) return [invalid(PKIX, OMIT_VALUE, 'must be the public key of spec.stubPKCS10Request')];
  if (!verifyProofOfPossession(pkix, str(spec.podUID), pop)) return [invalid(POP, OMIT_VALUE, 'could not verify proof-of-possession signature')];
  return [];
}

/** ValidatePodCertificateRequestCreate (metadata is validated generically). */
export function validatePodCertificateRequest(obj: KObject): FieldError[] {
  const spec = pcrSpecOf(obj);
  const errs: FieldError[] = [...validateSignerName('spec.signerName', str(spec.signerName))];
  if (spec.unverifiedUserAnnotations) errs.push(...validateAnnotations(spec.unverifiedUserAnnotations, 'spec.unverifiedUserAnnotations'));
  errs.push(...nameErrors('spec.podName', str(spec.podName)), ...uidErrors('spec.podUID', str(spec.podUID)));
  errs.push(...nameErrors('spec.serviceAccountName', str(spec.serviceAccountName)), ...uidErrors('spec.serviceAccountUID', str(spec.serviceAccountUID)));
  errs.push(...nameErrors('spec.nodeName', str(spec.nodeName)), ...uidErrors('spec.nodeUID', str(spec.nodeUID)));
  // Upstream stops only at a missing maxExpirationSeconds; an out-of-range one is reported with the key's errors.
  if (spec.maxExpirationSeconds === undefined || spec.maxExpirationSeconds === null) return [...errs, ...maxExpirationErrors(spec)];
  errs.push(...maxExpirationErrors(spec));
  const stub = stubRequestErrors(fieldBytes(spec.stubPKCS10Request));
  if (stub.errs.length > 0) return [...errs, ...stub.errs];
  return [...errs, ...legacyKeyErrors(spec, stub.spki)];
}

/** ValidatePodCertificateRequestUpdate: only metadata may change; the whole spec is immutable. */
export function validatePodCertificateRequestUpdate(obj: KObject, old: KObject): FieldError[] {
  if (deepEqual(obj.spec ?? {}, old.spec ?? {})) return [];
  return [invalid('spec', OMIT_VALUE, 'field is immutable')];
}
