/**
 * status.conditions of a CSR: validation, the update rules that keep approval and issuance apart,
 * and the server-set timestamps. Mirrors upstream's certificates validation and strategy helpers.
 */
import {
  CONDITION_APPROVED,
  CONDITION_DENIED,
  CONDITION_FAILED,
  type CertificateSigningRequestCondition,
} from '../../../api/certificates.js';
import { type FieldError, duplicate, forbidden, invalid, notSupported, required } from '../../http/field-errors.js';
import { text } from '../../../lib/json.js';
import { timestampSeconds } from '../../../lib/rfc3339.js';

type Conditions = CertificateSigningRequestCondition[];

const CONDITIONS_PATH = 'status.conditions';
const TRUE_ONLY = ['True'];
const ALL_STATUSES = ['False', 'True', 'Unknown'];
/** Condition types whose instances may never be removed. */
const PERMANENT = [CONDITION_APPROVED, CONDITION_DENIED, CONDITION_FAILED];
/** Condition types only the approval subresource may add or change. */
const APPROVAL = [CONDITION_APPROVED, CONDITION_DENIED];
const ZERO_TIME = '0001-01-01T00:00:00Z';

export interface ConditionOptions {
  allowBothApprovedAndDenied: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
}

/** Rules relaxed only for stored objects that already break them (upstream's compatibility options). */
export function conditionOptions(old: Conditions | undefined): ConditionOptions {
  const types = (old ?? []).map((c) => c.type);
  return {
    allowBothApprovedAndDenied: types.includes(CONDITION_APPROVED) && types.includes(CONDITION_DENIED),
    allowDuplicateConditionTypes: new Set(types).size !== types.length,
    allowEmptyConditionType: types.some((t) => !t),
  };
}

export function validateConditions(conditions: Conditions, opts: ConditionOptions): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions.forEach((c, i) => {
    const at = `${CONDITIONS_PATH}[${i}]`;
    if (!opts.allowEmptyConditionType && !c.type) errs.push(required(`${at}.type`));
    const allowed = PERMANENT.includes(c.type) ? TRUE_ONLY : ALL_STATUSES;
    if (!c.status) errs.push(required(`${at}.status`));
    else if (!allowed.includes(c.status)) errs.push(notSupported(`${at}.status`, c.status, allowed));
    if (!opts.allowBothApprovedAndDenied) {
      if (c.type === CONDITION_APPROVED) {
        approved = true;
        if (denied) errs.push(invalid(CONDITIONS_PATH, c.type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (c.type === CONDITION_DENIED) {
        denied = true;
        if (approved) errs.push(invalid(CONDITIONS_PATH, c.type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!opts.allowDuplicateConditionTypes) {
      if (seen.has(c.type)) errs.push(duplicate(`${at}.type`, c.type));
      seen.add(c.type);
    }
  });
  return errs;
}

const ofType = (conditions: Conditions, type: string): Conditions => conditions.filter((c) => c.type === type);

/** Update-only rules: permanent types are never removed; approval types change only via /approval. */
export function validateConditionUpdate(next: Conditions, old: Conditions, allowApproval: boolean): FieldError[] {
  const errs: FieldError[] = [];
  for (const t of PERMANENT) {
    if (ofType(next, t).length < ofType(old, t).length) {
      errs.push(forbidden(CONDITIONS_PATH, `updates may not remove a condition of type ${JSON.stringify(t)}`));
    }
  }
  if (allowApproval) return errs;
  for (const t of APPROVAL) {
    const before = ofType(old, t);
    const after = ofType(next, t);
    if (after.length > before.length) {
      errs.push(forbidden(CONDITIONS_PATH, `updates may not add a condition of type ${JSON.stringify(t)}`));
    } else if (after.length === before.length && !sameConditions(before, after)) {
      const diff = `- ${JSON.stringify(before)}\n+ ${JSON.stringify(after)}`;
      errs.push(forbidden(CONDITIONS_PATH, `updates may not modify a condition of type ${JSON.stringify(t)}\n${diff}`));
    }
  }
  return errs;
}

function sameConditions(a: Conditions, b: Conditions): boolean {
  return JSON.stringify(a.map(normalizeCondition)) === JSON.stringify(b.map(normalizeCondition));
}

/**
 * A condition time as stored: the decoder has already written it in metav1.Time's form; the zero
 * time (or none) reads as absent.
 */
function normalizeTime(value: unknown): string | undefined {
  return typeof value !== 'string' || value === '' || value === ZERO_TIME ? undefined : value;
}

/** A condition with Go's field order and omissions (reason and message are omitempty). */
export function normalizeCondition(c: CertificateSigningRequestCondition): CertificateSigningRequestCondition {
  const out: CertificateSigningRequestCondition = { type: text(c.type), status: text(c.status) };
  if (c.reason) out.reason = text(c.reason);
  if (c.message) out.message = text(c.message);
  const updated = normalizeTime(c.lastUpdateTime);
  const transitioned = normalizeTime(c.lastTransitionTime);
  out.lastUpdateTime = updated ?? null;
  out.lastTransitionTime = transitioned ?? null;
  return out;
}

/** Conditions of a JSON object's status, normalized; anything that is not a list reads as none. */
export function readConditions(status: unknown): Conditions {
  const list = (status as { conditions?: unknown } | undefined)?.conditions;
  if (!Array.isArray(list)) return [];
  return list.map((c) => normalizeCondition((c ?? {}) as CertificateSigningRequestCondition));
}

/**
 * Missing lastUpdateTime becomes now; missing lastTransitionTime is taken from the first old
 * condition with the same type and status that has one, else now. Given timestamps are kept.
 */
export function populateConditionTimestamps(next: Conditions, old: Conditions, now: Date): void {
  const stamp = timestampSeconds(now);
  for (const c of next) {
    if (!c.lastUpdateTime) c.lastUpdateTime = stamp;
    if (!c.lastTransitionTime) {
      const prior = old.find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime);
      c.lastTransitionTime = prior?.lastTransitionTime ?? stamp;
    }
  }
}

/**
 * For /status: when `next` has as many conditions of `type` as `old`, the old instances replace the
 * new ones in place (edits are silently reverted); otherwise nothing changes and validation reports it.
 */
export function preserveConditionInstances(next: Conditions, old: Conditions, type: string): void {
  const oldIdx = old.flatMap((c, i) => (c.type === type ? [i] : []));
  const newIdx = next.flatMap((c, i) => (c.type === type ? [i] : []));
  if (oldIdx.length !== newIdx.length) return;
  newIdx.forEach((n, k) => {
    next[n] = { ...(old[oldIdx[k] as number] as CertificateSigningRequestCondition) };
  });
}
