/**
 * certificates.k8s.io/v1 CertificateSigningRequest: kube-apiserver's csrStrategy and its /status and
 * /approval strategies. Approval (conditions) and issuance (certificate) go through separate
 * subresources so RBAC and the signer admission checks can keep the two roles apart.
 */
import type { CertificateSigningRequestCondition, CertificateSigningRequestSpec } from '../../../api/certificates.js';
import { CERTIFICATES_GROUP, CONDITION_APPROVED, CONDITION_DENIED, CSR_RESOURCE } from '../../../api/certificates.js';
import type { KObject, UserInfo } from '../../../api/meta.js';
import { findResource, type ResourceInfo } from '../../../api/resources.js';
import { plainExtra } from '../../authentication/request-authenticator.js';
import { canonicalBytes, checkBytesFields } from './bytes.js';
import { populateConditionTimestamps, preserveConditionInstances, readConditions } from './conditions.js';
import { csrTable } from './table.js';
import { cloneObject } from '../../../lib/json-value.js';
import { validateCsr, validateCsrUpdate } from './validation.js';
import type { RequestContext, Strategy, SubresourceStrategy } from '../generic/strategy.js';

const info: ResourceInfo = (() => {
  const found = findResource(CERTIFICATES_GROUP, 'v1', CSR_RESOURCE);
  if (!found) throw new Error('certificatesigningrequests missing from RESOURCES');
  return found;
})();

type Json = Record<string, unknown>;

/** The spec with Go's field order, omissions and the requester's identity (PrepareForCreate). */
function specForCreate(spec: Json, user: UserInfo | undefined): Json {
  const out: Json = { request: canonicalBytes(spec.request) ?? (spec.request === '' ? '' : null) };
  out.signerName = typeof spec.signerName === 'string' ? spec.signerName : '';
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds !== null) out.expirationSeconds = spec.expirationSeconds;
  if (Array.isArray(spec.usages) && spec.usages.length > 0) out.usages = spec.usages;
  return { ...out, ...identity(user) };
}

/** spec.username/uid/groups/extra from the authenticated user, each omitted when empty. */
function identity(user: UserInfo | undefined): Json {
  const out: Json = {};
  if (user?.username) out.username = user.username;
  if (user?.uid) out.uid = user.uid;
  if (user && user.groups.length > 0) out.groups = [...user.groups];
  if (user?.extra && Object.keys(user.extra).length > 0) {
    out.extra = plainExtra(user.extra);
  }
  return out;
}

/** A status object in Go's shape: both fields omitted when empty. */
function status(conditions: CertificateSigningRequestCondition[], certificate: unknown): Json {
  const out: Json = {};
  if (conditions.length > 0) out.conditions = conditions;
  const cert = canonicalBytes(certificate);
  if (cert !== undefined) out.certificate = cert;
  return out;
}

const clone = <T>(v: T): T => (v === undefined ? v : cloneObject(v));
const certificateOf = (obj: KObject): unknown => (obj.status as Json | undefined)?.certificate;

const approvalStrategy: SubresourceStrategy = {
  /** Only the conditions come from the request; timestamps are filled before spec and certificate are restored. */
  prepareForUpdate(obj: KObject, old: KObject, ctx: RequestContext): void {
    checkBytesFields(obj);
    const conditions = readConditions(obj.status);
    populateConditionTimestamps(conditions, readConditions(old.status), ctx.now);
    obj.spec = clone(old.spec);
    obj.status = status(conditions, certificateOf(old));
  },
  validateUpdate: (obj, old) => validateCsrUpdate(obj, old, { approvalConditions: true, certificate: false }),
};

const statusStrategy: SubresourceStrategy = {
  /** Spec is restored and Approved/Denied edits reverted in place; counts that differ are left for validation. */
  prepareForUpdate(obj: KObject, old: KObject, ctx: RequestContext): void {
    checkBytesFields(obj);
    const conditions = readConditions(obj.status);
    const oldConditions = readConditions(old.status);
    preserveConditionInstances(conditions, oldConditions, CONDITION_APPROVED);
    preserveConditionInstances(conditions, oldConditions, CONDITION_DENIED);
    populateConditionTimestamps(conditions, oldConditions, ctx.now);
    obj.spec = clone(old.spec);
    obj.status = status(conditions, certificateOf(obj));
  },
  validateUpdate: (obj, old) => validateCsrUpdate(obj, old, { approvalConditions: false, certificate: true }),
};

export const csrStrategy: Strategy = {
  info,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,

  /** Identity comes from authentication, and a CSR cannot be created approved or issued. */
  prepareForCreate(obj: KObject, ctx: RequestContext): void {
    checkBytesFields(obj);
    obj.spec = specForCreate((obj.spec ?? {}) as Json, ctx.user);
    obj.status = {};
  },

  validate: (obj) => validateCsr(obj),

  /** Main-resource updates change metadata only: spec and status edits are silently dropped. */
  prepareForUpdate(obj: KObject, old: KObject): void {
    checkBytesFields(obj);
    obj.spec = clone(old.spec);
    obj.status = clone(old.status);
  },

  validateUpdate: (obj, old) => validateCsrUpdate(obj, old, { approvalConditions: false, certificate: false }),

  /** CSR names have no kind-specific rules (only the generic path-segment ones). */
  validateName: () => [],

  subresources: { approval: approvalStrategy, status: statusStrategy },

  fieldSelectors: {
    'spec.signerName': (obj) => ((obj.spec ?? {}) as Partial<CertificateSigningRequestSpec>).signerName ?? '',
  },

  table: csrTable,
};
