/**
 * PodCertificateRequest /status updates, as upstream's ValidatePodCertificateRequestStatusUpdate: at
 * most one of the terminal conditions Issued, Denied and Failed (status True, metav1.Condition rules);
 * once terminal the whole status is frozen; Denied and Failed carry nothing but conditions; Issued
 * carries certificateChain, notBefore, beginRefreshAt and notAfter together, checked against the leaf
 * (its key is the requested one, the times are its own, its lifetime within [1 h,
 * maxExpirationSeconds], notBefore within 5 minutes of now, beginRefreshAt 10 minutes inside the
 * validity). Any other change is refused. Messages and paths are upstream's (their `.[i]` too).
 */
import { X509Certificate } from '@peculiar/x509';
import type { KObject } from '../../../api/meta.js';
import {
  PCR_CONDITION_DENIED,
  PCR_CONDITION_FAILED,
  PCR_CONDITION_ISSUED,
  PCR_MAX_CERTIFICATE_CHAIN_BYTES,
  PCR_TERMINAL_CONDITIONS,
  type PodCertificateRequestCondition,
  type PodCertificateRequestStatus,
} from '../../../api/pod-certificates.js';
import { semanticEqual } from '../../../lib/json-value.js';
import { readCertificateInfo, type CertificateInfo } from '../../../pki/certificate.js';
import { parseCertificateRequestDer } from '../../../pki/csr.js';
import { decodePemBlocks, type PemBlock } from '../../../pki/pem.js';
import { type FieldError, OMIT_VALUE, duplicate, invalid, notSupported, required, tooLong } from '../../http/field-errors.js';
import { byteLength, isQualifiedName, regexError } from '../../validation/names.js';
import { fieldBytes } from './bytes.js';
import { pcrSpecOf } from './pcr-validation.js';

const CHAIN = 'status.certificateChain';
const NOT_BEFORE = 'status.notBefore';
const NOT_AFTER = 'status.notAfter';
const BEGIN_REFRESH = 'status.beginRefreshAt';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const MAX_REASON_LEN = 1024;
const MAX_MESSAGE_LEN = 32 * 1024;
const REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const REASON = new RegExp(`^${REASON_FMT}$`);
const REASON_MSG =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
const CONDITION_STATUSES = ['False', 'True', 'Unknown'];

export const pcrStatusOf = (obj: KObject): PodCertificateRequestStatus => (obj.status ?? {}) as PodCertificateRequestStatus;
const conditionsOf = (obj: KObject): PodCertificateRequestCondition[] => {
  const c = pcrStatusOf(obj).conditions;
  return Array.isArray(c) ? c : [];
};
const isTrue = (obj: KObject, type: string): boolean => conditionsOf(obj).some((c) => c.type === type && c.status === 'True');
const TERMINAL: readonly string[] = PCR_TERMINAL_CONDITIONS;

/**
 * Semantic.DeepEqual of two statuses. Every scalar of the status and its conditions is a non-pointer
 * string or integer in Go (the times that are pointers are never '' or 0), so '' and 0 are the same
 * as absent anywhere in it.
 */
function sameStatus(a: PodCertificateRequestStatus, b: PodCertificateRequestStatus): boolean {
  return semanticEqual(a, b, (v) => v === '' || v === 0);
}

/** metav1 validation.ValidateCondition, for condition `i`. */
function conditionErrors(c: PodCertificateRequestCondition, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof c.type === 'string' ? c.type : '';
  for (const m of isQualifiedName(type)) errs.push(invalid(`${at}.type`, type, m));
  if (!CONDITION_STATUSES.includes(String(c.status))) errs.push(notSupported(`${at}.status`, c.status ?? '', CONDITION_STATUSES));
  if (typeof c.observedGeneration === 'number' && c.observedGeneration < 0) {
    errs.push(invalid(`${at}.observedGeneration`, c.observedGeneration, 'must be greater than or equal to zero'));
  }
  if (!c.lastTransitionTime) errs.push(required(`${at}.lastTransitionTime`, 'must be set'));
  const reason = typeof c.reason === 'string' ? c.reason : '';
  if (reason === '') errs.push(required(`${at}.reason`, 'must be set'));
  else {
    if (!REASON.test(reason)) errs.push(invalid(`${at}.reason`, reason, regexError(REASON_MSG, REASON_FMT, 'my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB')));
    if (byteLength(reason) > MAX_REASON_LEN) errs.push(tooLong(`${at}.reason`, MAX_REASON_LEN));
  }
  if (typeof c.message === 'string' && byteLength(c.message) > MAX_MESSAGE_LEN) errs.push(tooLong(`${at}.message`, MAX_MESSAGE_LEN));
  return errs;
}

/** The known-condition rules, then metav1's rules for every condition. */
function allConditionErrors(conditions: PodCertificateRequestCondition[]): FieldError[] {
  const errs: FieldError[] = [];
  let known = 0;
  conditions.forEach((c, i) => {
    const at = `status.conditions.[${i}]`;
    if (TERMINAL.includes(c.type)) {
      known++;
      if (known > 1) errs.push(invalid(`${at}.type`, c.type, 'There may be at most one condition with type "Issued", "Denied", or "Failed"'));
      if (c.status !== 'True') errs.push(notSupported(`${at}.status`, c.status ?? '', ['True']));
    } else {
      errs.push(notSupported(`${at}.type`, c.type ?? '', [...TERMINAL]));
    }
  });
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const at = `status.conditions[${i}]`;
    if (seen.has(c.type)) errs.push(duplicate(`${at}.type`, c.type));
    seen.add(c.type);
    errs.push(...conditionErrors(c, at));
  });
  return errs;
}

/** Seconds since the epoch of an RFC 3339 time field, or undefined when absent or unparsable. */
function seconds(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** The leaf and the rest of the chain, or the error upstream gives for a chain that is not one. */
function readChain(chain: string): { leaf: CertificateInfo; rest: PemBlock[] } | FieldError {
  let blocks: PemBlock[];
  try {
    blocks = decodePemBlocks(chain);
  } catch {
    blocks = [];
  }
  const [first, ...rest] = blocks;
  if (!first) return invalid(CHAIN, chain, 'issued certificate chain must contain at least one certificate');
  if (first.type !== 'CERTIFICATE') return invalid(CHAIN, chain, 'issued certificate chain must consist entirely of CERTIFICATE PEM blocks');
  try {
    return { leaf: readCertificateInfo(first.der), rest };
  } catch {
    return invalid(CHAIN, chain, 'leaf certificate does not parse as valid X.509');
  }
}

/** The leaf's DNS names and email addresses, as upstream checks them. */
function leafNameErrors(der: Uint8Array): FieldError[] {
  const errs: FieldError[] = [];
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(der);
  } catch {
    return [invalid(CHAIN, '', 'leaf certificate does not parse as valid X.509')];
  }
  const sans = cert.getExtension('2.5.29.17') as { names?: { items: { type: string; value: string }[] } } | null;
  for (const item of sans?.names?.items ?? []) {
    if (item.type === 'dns') {
      const d = item.value;
      if (d === '') errs.push(invalid(CHAIN, d, 'leaf certificate should not contain empty DNSName'));
      if (d.includes('..')) errs.push(invalid(CHAIN, d, "leaf certificate's DNSName should not contain '..'"));
      if (d.startsWith('.') || d.endsWith('.')) errs.push(invalid(CHAIN, d, "leaf certificate's DNSName should not start or end with '.'"));
    } else if (item.type === 'email' && !/^[^@\s<>]+@[^@\s<>]+$/.test(item.value)) {
      errs.push(invalid(CHAIN, item.value, 'leaf certificate should not contain invalid EmailAddress'));
    }
  }
  return errs;
}

/** The public key the request asked for: the stub request's (always present, and equal to pkixPublicKey when that is set). */
function requestedKey(old: KObject): Uint8Array | undefined {
  try {
    return parseCertificateRequestDer(fieldBytes(pcrSpecOf(old).stubPKCS10Request), { verifySignature: false }).publicKeyDer;
  } catch {
    return undefined;
  }
}

/** A time as Go's time.Time String() prints it in a field error (`2026-01-02 15:04:05 +0000 UTC`). */
const goTime = (s: number): { goSyntax: string } => ({ goSyntax: `${new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ')} +0000 UTC` });

/** The three times, each present, in whole seconds; or the errors of those missing. */
function issuedTimes(status: PodCertificateRequestStatus): { nb: number; na: number; br: number } | FieldError[] {
  const nb = seconds(status.notBefore);
  const na = seconds(status.notAfter);
  const br = seconds(status.beginRefreshAt);
  if (nb !== undefined && na !== undefined && br !== undefined) return { nb, na, br };
  const errs: FieldError[] = [];
  if (nb === undefined) errs.push(required(NOT_BEFORE, 'must be present and consistent with the issued certificate'));
  if (na === undefined) errs.push(required(NOT_AFTER, 'must be present and consistent with the issued certificate'));
  if (br === undefined) errs.push(required(BEGIN_REFRESH, 'must be present and in the range [notbefore+10min, notafter-10min]'));
  return errs;
}

/** The times against the leaf and the clock, the lifetime against [1 h, maxExpirationSeconds], beginRefreshAt inside. */
function timeErrors(t: { nb: number; na: number; br: number }, leaf: CertificateInfo, maxSeconds: number, now: Date): FieldError | undefined {
  const leafNb = Math.floor(leaf.notBefore.getTime() / 1000);
  const leafNa = Math.floor(leaf.notAfter.getTime() / 1000);
  if (t.nb !== leafNb) return invalid(NOT_BEFORE, goTime(t.nb), 'must be set to the NotBefore time encoded in the leaf certificate');
  if (Math.abs(t.nb * 1000 - now.getTime()) >= 5 * MINUTE) return invalid(NOT_BEFORE, goTime(t.nb), "must be set to within 5 minutes of kube-apiserver's current time");
  if (t.na !== leafNa) return invalid(NOT_AFTER, goTime(t.na), 'must be set to the NotAfter time encoded in the leaf certificate');
  const lifetime = (leafNa - leafNb) * 1000;
  if (lifetime < HOUR) return invalid(CHAIN, { goSyntax: goDuration(lifetime) }, 'leaf certificate lifetime must be >= 1 hour');
  if (lifetime > maxSeconds * 1000) {
    return invalid(CHAIN, { goSyntax: goDuration(lifetime) }, `leaf certificate lifetime must be <= spec.maxExpirationSeconds (${maxSeconds})`);
  }
  if (t.br < t.nb + 600) return invalid(BEGIN_REFRESH, goTime(t.br), 'must be at least 10 minutes after status.notBefore');
  if (t.br > t.na - 600) return invalid(BEGIN_REFRESH, goTime(t.br), 'must be at least 10 minutes before status.notAfter');
  return undefined;
}

/** Every certificate after the leaf: a CERTIFICATE block that parses (the chain itself is not verified, as upstream). */
function intermediateError(chain: string, rest: PemBlock[]): FieldError | undefined {
  for (const block of rest) {
    // Upstream's text, typo included.
    if (block.type !== 'CERTIFICATE') return invalid(CHAIN, chain, 'issued certificate chain must consist entirely of CERTFICATE PEM blocks');
    try {
      readCertificateInfo(block.der);
    } catch {
      return invalid(CHAIN, chain, 'intermediate certificate does not parse as valid X.509');
    }
  }
  return undefined;
}

/** The Issued transition: chain, key, the three times, lifetime and the intermediates. */
function issuedErrors(obj: KObject, old: KObject, now: Date): FieldError[] {
  const status = pcrStatusOf(obj);
  const chain = typeof status.certificateChain === 'string' ? status.certificateChain : '';
  if (byteLength(chain) > PCR_MAX_CERTIFICATE_CHAIN_BYTES) return [tooLong(CHAIN, PCR_MAX_CERTIFICATE_CHAIN_BYTES)];
  const read = readChain(chain);
  if ('type' in read) return [read];
  const nameErrs = leafNameErrors(read.leaf.der);
  const want = requestedKey(old);
  if (!want || !Buffer.from(want).equals(Buffer.from(read.leaf.spkiDer))) {
    return [...nameErrs, invalid(CHAIN, chain, 'leaf certificate was not issued to the requested public key')];
  }
  const times = issuedTimes(status);
  if (Array.isArray(times)) return [...nameErrs, ...times];
  if (nameErrs.length > 0) return nameErrs;
  const bad = timeErrors(times, read.leaf, Number(pcrSpecOf(old).maxExpirationSeconds ?? 0), now) ?? intermediateError(chain, read.rest);
  return bad ? [bad] : [];
}

/** Go's time.Duration String() for whole seconds (`24h0m0s`, `30m0s`). */
function goDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** ValidatePodCertificateRequestStatusUpdate (metadata is validated generically, spec was restored). */
export function validatePodCertificateRequestStatus(obj: KObject, old: KObject, now: Date): FieldError[] {
  const conditionErrs = allConditionErrors(conditionsOf(obj));
  if (conditionErrs.length > 0) return conditionErrs;
  const status = pcrStatusOf(obj);
  const oldStatus = pcrStatusOf(old);
  if (TERMINAL.some((t) => isTrue(old, t))) {
    return sameStatus(status, oldStatus) ? [] : [invalid('status', OMIT_VALUE, 'immutable after PodCertificateRequest is issued, denied, or failed')];
  }
  if (isTrue(obj, PCR_CONDITION_DENIED) || isTrue(obj, PCR_CONDITION_FAILED)) {
    if (sameStatus(status, { conditions: conditionsOf(obj) })) return [];
    return [invalid('status', OMIT_VALUE, 'non-condition status fields must be empty when denying or failing the PodCertificateRequest')];
  }
  if (isTrue(obj, PCR_CONDITION_ISSUED)) return issuedErrors(obj, old, now);
  if (sameStatus(status, oldStatus)) return [];
  return [invalid('status', OMIT_VALUE, 'status is immutable unless transitioning to "Issued", "Denied", or "Failed"')];
}

/** Whether a status write changes anything (upstream then requires `sign` on the signer). */
export function statusChanged(obj: KObject, old: KObject): boolean {
  return !sameStatus(pcrStatusOf(obj), pcrStatusOf(old));
}
