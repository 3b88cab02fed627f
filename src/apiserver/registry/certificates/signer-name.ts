/**
 * spec.signerName syntax (core validation's ValidateSignerName): `domain/path`, where the domain is
 * a dotted name of DNS-1123 labels and each dot-separated piece of the path a DNS-1123 subdomain.
 * Errors and their order are upstream's, since clients and tests match on them.
 */
import { type FieldError, invalid, required, tooLong } from '../../http/field-errors.js';
import { byteLength as byteLen, isDns1123Label, isDns1123Subdomain } from '../../validation/names.js';

const LABEL_MAX = 63;
const SUBDOMAIN_MAX = 253;
/** domain + '/' + a path of up to a subdomain, a label and a dot. */
const SIGNER_NAME_MAX = SUBDOMAIN_MAX + (SUBDOMAIN_MAX + LABEL_MAX + 1) + 1;

/** Errors of the first piece that fails `check`, each reported against `whole`. */
function firstBadPiece(field: string, whole: string, pieces: string[], check: (s: string) => string[]): FieldError[] {
  for (const piece of pieces) {
    const errs = check(piece);
    if (errs.length > 0) return errs.map((e) => invalid(field, whole, `validating label ${JSON.stringify(piece)}: ${e}`));
  }
  return [];
}

export function validateSignerName(field: string, signerName: string): FieldError[] {
  if (signerName.length === 0) return [required(field)];
  const segments = signerName.split('/');
  if (segments.length !== 2) {
    return [invalid(field, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  }
  const [domain = '', path = ''] = segments;
  const errs: FieldError[] = [];
  if (byteLen(domain) > SUBDOMAIN_MAX) errs.push(tooLong(field, SUBDOMAIN_MAX));
  const domainLabels = domain.split('.');
  errs.push(...firstBadPiece(field, domain, domainLabels, isDns1123Label));
  if (domainLabels.length < 2) {
    errs.push(invalid(field, domain, 'should be a domain with at least two segments separated by dots'));
  }
  errs.push(...firstBadPiece(field, path, path.split('.'), isDns1123Subdomain));
  if (byteLen(signerName) > SIGNER_NAME_MAX) errs.push(tooLong(field, SIGNER_NAME_MAX));
  return errs;
}
