/**
 * certificates.k8s.io PodCertificateRequests (upstream's pkg/registry/certificates/podcertificaterequest):
 * namespaced; spec immutable and defaulted (maxExpirationSeconds 86400); status written only through
 * /status, by a user with `sign` on the signer; conditional updates only; field selectors
 * spec.signerName, spec.podName and spec.nodeName.
 *
 * Served in v1 and v1beta1. v1beta1 is stored, since its schema holds v1's (it adds the deprecated
 * pkixPublicKey and proofOfPossession): v1 is a view that leaves those two out, and a write through v1
 * keeps them from the stored object (the spec is immutable, so they cannot have changed).
 */
import type { KObject } from '../../../api/meta.js';
import {
  PCR_DEFAULT_MAX_EXPIRATION_SECONDS,
  PCR_KIND,
  PCR_RESOURCE,
  PCR_VERSIONS,
  VERB_SIGN,
  pcrTerminalCondition,
  type PodCertificateRequestWire,
  type PcrVersion,
} from '../../../api/pod-certificates.js';
import { CERTIFICATES_GROUP } from '../../../api/certificates.js';
import { findResource, type ResourceInfo } from '../../../api/resources.js';
import { cloneObject } from '../../../lib/json-value.js';
import { isAuthorizedForSignerName } from '../../authorization/signers.js';
import { errors } from '../../http/errors.js';
import { forbidden } from '../../http/field-errors.js';
import type { Store } from '../../storage/store.js';
import { storageKey } from '../../storage/store.js';
import { ConvertedStore } from '../generic/converted-store.js';
import type { RequestContext, Strategy, SubresourceStrategy, TableConvertor } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';
import { checkByteFields, fieldBytes } from './bytes.js';
import { pcrSpecOf, validatePodCertificateRequest, validatePodCertificateRequestUpdate } from './pcr-validation.js';
import { statusChanged, validatePodCertificateRequestStatus } from './pcr-status-validation.js';

/** The version objects are stored in: the one whose schema holds every field. */
export const PCR_STORAGE_VERSION: PcrVersion = 'v1beta1';
const STORAGE_API_VERSION = `${CERTIFICATES_GROUP}/${PCR_STORAGE_VERSION}`;
/** Fields only v1beta1 has. */
const V1BETA1_ONLY = ['pkixPublicKey', 'proofOfPossession'] as const;
const BYTE_FIELDS = ['stubPKCS10Request', ...V1BETA1_ONLY] as const;

type Json = Record<string, unknown>;
const specRecord = (obj: KObject): Json => (obj.spec ?? {}) as Json;
/** Either version's object, as the strategies see it after decoding (or as stored). */
type Pcr = PodCertificateRequestWire;

function infoFor(version: PcrVersion): ResourceInfo {
  const found = findResource(CERTIFICATES_GROUP, version, PCR_RESOURCE);
  if (!found) throw new Error(`podcertificaterequests ${version} missing from RESOURCES`);
  return found;
}

/** The 400 the body decoder gives for []byte fields that are not base64, then the bytes as Go re-encodes them. */
function canonicalizeBytes(obj: KObject, version: PcrVersion): void {
  const spec = specRecord(obj);
  checkByteFields(
    PCR_KIND,
    version,
    BYTE_FIELDS.map((f) => [spec[f], 'PodCertificateRequestSpec', `spec.${f}`]),
  );
  for (const f of BYTE_FIELDS) {
    const bytes = fieldBytes(spec[f]);
    if (bytes.length > 0) spec[f] = bytes.toString('base64');
    else delete spec[f];
  }
}

/** metav1.ResetObjectMetaForStatus: a /status write changes no metadata but managedFields. */
function resetMetaForStatus(obj: KObject, old: KObject): void {
  const meta = (obj.metadata ??= {});
  const was = old.metadata ?? {};
  for (const key of ['deletionTimestamp', 'generation', 'labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    if (was[key] === undefined) delete meta[key];
    else (meta as Json)[key] = cloneObject(was[key] as object);
  }
}

/** Issued, Denied, Failed or Pending: the request's terminal condition, if it has one. */
const stateOf = (obj: Pcr): string => pcrTerminalCondition(obj as { status?: never })?.type ?? 'Pending';

const table: TableConvertor<Pcr> = {
  columns: [
    NAME_COLUMN,
    column('SignerName', 'string', 'signerName indicates the requested signer. List and watch can filter on it with a spec.signerName=NAME field selector.'),
    column('Pod', 'string', 'podName is the name of the pod into which the certificate will be mounted.'),
    column('ServiceAccount', 'string', 'serviceAccountName is the name of the service account the pod runs as.'),
    column('State', 'string', 'Issued, Denied or Failed once the signer answered; Pending before.'),
    AGE_COLUMN,
    { ...column('Node', 'string', 'nodeName is the name of the node the pod is assigned to.'), priority: 1 },
  ],
  cells(obj, now) {
    const spec = obj.spec ?? {};
    return [
      obj.metadata?.name ?? '',
      spec.signerName ?? '',
      spec.podName ?? '',
      spec.serviceAccountName ?? '',
      stateOf(obj),
      ageCell(obj.metadata?.creationTimestamp, now),
      spec.nodeName ?? '',
    ];
  },
};

/** /status: only status changes (spec and metadata are restored), under upstream's transition rules. */
const statusStrategy: SubresourceStrategy<Pcr> = {
  prepareForUpdate(obj, old) {
    obj.spec = cloneObject(old.spec);
    resetMetaForStatus(obj, old);
  },
  validateUpdate: (obj, old, ctx) => validatePodCertificateRequestStatus(obj, old, ctx.now),
  /** Upstream's status strategy: changing anything in status needs `sign` on the signer (exact or `<domain>/*`). */
  async admit(obj, old, ctx: RequestContext) {
    if (!statusChanged(obj, old)) return;
    const signerName = old.spec?.signerName ?? '';
    if (await isAuthorizedForSignerName(ctx.authorizer, ctx.user, VERB_SIGN, signerName)) return;
    throw errors.invalid(PCR_KIND, CERTIFICATES_GROUP, old.metadata?.name ?? '', [
      forbidden('spec.signerName', `User ${JSON.stringify(ctx.user.username)} is not permitted to "sign" for signer ${JSON.stringify(signerName)}`),
    ]);
  },
};

function strategyFor(version: PcrVersion): Strategy<Pcr> {
  return {
    info: infoFor(version),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    setDefaults(obj) {
      const spec = specRecord(obj);
      if (obj.spec !== undefined && (spec.maxExpirationSeconds === undefined || spec.maxExpirationSeconds === null)) {
        spec.maxExpirationSeconds = PCR_DEFAULT_MAX_EXPIRATION_SECONDS;
      }
    },
    prepareForCreate(obj) {
      canonicalizeBytes(obj, version);
      obj.status = {};
    },
    validate: (obj) => validatePodCertificateRequest(obj),
    prepareForUpdate(obj, old) {
      canonicalizeBytes(obj, version);
      obj.status = cloneObject(old.status ?? {});
    },
    validateUpdate: (obj, old) => validatePodCertificateRequestUpdate(obj, old),
    subresources: { status: statusStrategy },
    fieldSelectors: {
      'spec.signerName': (obj) => pcrSpecOf(obj).signerName ?? '',
      'spec.podName': (obj) => pcrSpecOf(obj).podName ?? '',
      'spec.nodeName': (obj) => pcrSpecOf(obj).nodeName ?? '',
    },
    table,
  };
}

export const podCertificateRequestStrategies: readonly Strategy[] = PCR_VERSIONS.map(strategyFor);

const withApiVersion = (obj: KObject, apiVersion: string): KObject => ({ ...obj, apiVersion });

/** v1's view of a stored object: the deprecated key fields left out. */
function toV1(obj: KObject, apiVersion: string): KObject {
  const spec = { ...specRecord(obj) };
  for (const f of V1BETA1_ONLY) delete spec[f];
  return obj.spec === undefined ? withApiVersion(obj, apiVersion) : { ...obj, apiVersion, spec };
}

/** A v1 object back in storage form, with the deprecated fields the stored object has. */
function fromV1(obj: KObject, stored: KObject | undefined): KObject {
  const kept = stored ? Object.fromEntries(V1BETA1_ONLY.filter((f) => specRecord(stored)[f] !== undefined).map((f) => [f, specRecord(stored)[f]])) : {};
  return { ...obj, apiVersion: STORAGE_API_VERSION, spec: { ...specRecord(obj), ...kept } };
}

/** The store a version's registry works on: the stored objects themselves, or v1's view of them. */
export function podCertificateRequestStore(store: Store, info: ResourceInfo): Store {
  const served = `${CERTIFICATES_GROUP}/${info.version}`;
  if (served === STORAGE_API_VERSION) return store;
  const prefix = storageKey(info.group, info.plural, undefined);
  return new ConvertedStore(store, {
    viewPrefix: prefix,
    storagePrefix: prefix,
    fromStorage: (obj) => toV1(obj, served),
    toStorage: (obj) => fromV1(obj, undefined),
    toStorageOver: (obj, stored) => fromV1(obj, stored),
  });
}
