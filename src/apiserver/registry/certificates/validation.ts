/**
 * Validation of a CertificateSigningRequest (upstream's certificates validation): the object
 * rules every write runs, and the update rules that depend on which path (main, /approval,
 * /status) is writing. Errors come in upstream's order with upstream's paths and texts.
 */
// src/pki/certificate.ts loads @peculiar/x509, which needs the Reflect polyfill first.
import {
  KEY_USAGES,
  SIGNER_LEGACY_UNKNOWN,
  type CertificateSigningRequestSpec,
  type CertificateSigningRequestStatus,
} from '../../../api/certificates.js';
import type { KObject } from '../../../api/meta.js';
import { certificateDers } from '../../../pki/certificate.js';
import { parseCertificateRequestPem } from '../../../pki/csr.js';
import { type FieldError, duplicate, forbidden, invalid, notSupported, required } from '../../http/field-errors.js';
import { bytesText, fieldBytes, goBytesLiteral } from './bytes.js';
import { type ConditionOptions, conditionOptions, readConditions, validateConditionUpdate, validateConditions } from './conditions.js';
import { validateSignerName } from './signer-name.js';
import { BoundedMap } from '../../../lib/bounded-map.js';

const SORTED_USAGES: readonly string[] = [...KEY_USAGES].sort();
const MIN_EXPIRATION_SECONDS = 600;

export interface CsrValidationOptions extends ConditionOptions {
  allowLegacySignerName: boolean;
  allowArbitraryCertificate: boolean;
  allowDuplicateUsages: boolean;
  allowUnknownUsages: boolean;
}

const STRICT: CsrValidationOptions = {
  allowBothApprovedAndDenied: false,
  allowDuplicateConditionTypes: false,
  allowEmptyConditionType: false,
  allowLegacySignerName: false,
  allowArbitraryCertificate: false,
  allowDuplicateUsages: false,
  allowUnknownUsages: false,
};

const specOf = (obj: KObject): Partial<CertificateSigningRequestSpec> =>
  (obj.spec ?? {}) as Partial<CertificateSigningRequestSpec>;
const statusOf = (obj: KObject): CertificateSigningRequestStatus => (obj.status ?? {}) as CertificateSigningRequestStatus;
const usagesOf = (obj: KObject): string[] => (Array.isArray(specOf(obj).usages) ? (specOf(obj).usages as string[]) : []);

/**
 * Why spec.request is not an acceptable PKCS#10 request (first PEM block must be a CERTIFICATE
 * REQUEST with a valid self-signature), or undefined.
 */
export function requestError(request: unknown): string | undefined {
  // Keyed by the field's base64 text, which determines the bytes, so a hit needs no decoding.
  const key = typeof request === 'string' ? request : bytesText(request);
  const known = requestErrors.get(key);
  if (known !== undefined) return known.error;
  const text = bytesText(request);
  let error: string | undefined;
  try {
    parseCertificateRequestPem(text);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  requestErrors.set(key, { error });
  return error;
}

/**
 * The verdict on recent requests. spec.request is immutable, so /approval and /status updates
 * re-validate the very bytes create checked; parsing and verifying the signature again was ~20% of
 * the server's CPU in the e2e benchmark. The verdict depends only on the bytes (a function of the
 * base64 text), so a memo of the most recent ones changes nothing but the cost.
 */
const requestErrors = new BoundedMap<string, { error: string | undefined }>(4096);

/** Why status.certificate is not an acceptable chain, or undefined (empty is acceptable). */
export function certificateError(certificate: unknown): string | undefined {
  const text = bytesText(certificate);
  if (text.length === 0) return undefined;
  try {
    certificateDers(text);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** A value that renders as Go's `%#v` of the []byte, which is what upstream prints for spec.request. */
function requestValue(request: unknown): { goSyntax: string } {
  const text = request === undefined || request === null ? '[]byte(nil)' : goBytesLiteral(fieldBytes(request));
  return { goSyntax: text };
}

function validateUsages(usages: string[], opts: CsrValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (usages.length === 0) errs.push(required('spec.usages'));
  if (!opts.allowUnknownUsages) {
    usages.forEach((u, i) => {
      if (!SORTED_USAGES.includes(u)) errs.push(notSupported(`spec.usages[${i}]`, u, SORTED_USAGES));
    });
  }
  if (!opts.allowDuplicateUsages) {
    const seen = new Set<string>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(duplicate(`spec.usages[${i}]`, u));
      seen.add(u);
    });
  }
  return errs;
}

/** The object rules (metadata excluded: the pipeline validates it). */
export function validateCsr(obj: KObject, opts: CsrValidationOptions = STRICT): FieldError[] {
  const spec = specOf(obj);
  const errs: FieldError[] = [];
  const reqErr = requestError(spec.request);
  if (reqErr !== undefined) errs.push(invalid('spec.request', requestValue(spec.request), reqErr));
  errs.push(...validateUsages(usagesOf(obj), opts));
  const signerName = typeof spec.signerName === 'string' ? spec.signerName : '';
  if (!opts.allowLegacySignerName && signerName === SIGNER_LEGACY_UNKNOWN) {
    errs.push(invalid('spec.signerName', signerName, 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName('spec.signerName', signerName));
  }
  const exp = spec.expirationSeconds;
  if (typeof exp === 'number' && exp < MIN_EXPIRATION_SECONDS) {
    errs.push(invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  errs.push(...validateConditions(readConditions(obj.status), opts));
  if (!opts.allowArbitraryCertificate) {
    const certErr = certificateError(statusOf(obj).certificate);
    if (certErr !== undefined) errs.push(invalid('status.certificate', '<certificate data>', certErr));
  }
  return errs;
}

/** Upstream's getValidationOptions: each rule is relaxed only if the stored object already breaks it. */
export function validationOptions(next: KObject, old: KObject): CsrValidationOptions {
  const oldUsages = usagesOf(old);
  const oldCert = statusOf(old).certificate;
  return {
    ...conditionOptions(readConditions(old.status)),
    allowLegacySignerName: specOf(old).signerName === SIGNER_LEGACY_UNKNOWN,
    allowArbitraryCertificate:
      bytesText(statusOf(next).certificate) === bytesText(oldCert) || certificateError(oldCert) !== undefined,
    allowDuplicateUsages: new Set(oldUsages).size !== oldUsages.length,
    allowUnknownUsages: oldUsages.some((u) => !SORTED_USAGES.includes(u)),
  };
}

export interface UpdatePermissions {
  /** Only /approval may add or change Approved and Denied. */
  approvalConditions: boolean;
  /** Only /status may set status.certificate. */
  certificate: boolean;
}

export function validateCsrUpdate(next: KObject, old: KObject, may: UpdatePermissions): FieldError[] {
  const errs = validateCsr(next, validationOptions(next, old));
  errs.push(...validateConditionUpdate(readConditions(next.status), readConditions(old.status), may.approvalConditions));
  const oldCert = bytesText(statusOf(old).certificate);
  if (bytesText(statusOf(next).certificate) !== oldCert) {
    if (!may.certificate) {
      errs.push(forbidden('status.certificate', 'updates may not set certificate content'));
    } else if (oldCert.length > 0) {
      errs.push(forbidden('status.certificate', 'updates may not modify existing certificate content'));
    }
  }
  return errs;
}
