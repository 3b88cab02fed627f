/**
 * Per kind: the field selectors it supports beyond metadata, how it reports an unsupported one,
 * and how each field is read from an object (the registries' GetAttrs/ToSelectableFields).
 */
import type { KObject } from '../../api/meta.js';
import type { UnknownFieldStyle } from './fields.js';

type Getter = (o: KObject) => string | undefined;

export interface SelectableFields {
  /** The kind's own fields (metadata.name/namespace come from objectFields). */
  extra: Record<string, Getter>;
  /** The fields a selector may name, metadata included. */
  allowed: string[];
  unknownFieldStyle: UnknownFieldStyle;
}

/** A dotted path read as a string; booleans print as Go's strconv.FormatBool does. */
function path(...keys: string[]): Getter {
  return (o) => {
    let v: unknown = o;
    for (const k of keys) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    return v === undefined || v === null ? undefined : String(v);
  };
}

const firstPodIP: Getter = (o) => {
  const ips = (o.status as { podIPs?: { ip?: string }[] } | undefined)?.podIPs;
  return ips?.[0]?.ip ?? path('status', 'podIP')(o);
};

const POD: Record<string, Getter> = {
  'spec.nodeName': path('spec', 'nodeName'),
  'spec.restartPolicy': path('spec', 'restartPolicy'),
  'spec.schedulerName': path('spec', 'schedulerName'),
  'spec.serviceAccountName': path('spec', 'serviceAccountName'),
  'spec.hostNetwork': (o) => path('spec', 'hostNetwork')(o) ?? 'false',
  'status.phase': path('status', 'phase'),
  'status.podIP': firstPodIP,
  'status.podIPs': firstPodIP,
  'status.nominatedNodeName': path('status', 'nominatedNodeName'),
};

/** A path, or when it is empty another (upstream's `source` falls back to the reporting controller). */
function either(first: Getter, second: Getter): Getter {
  return (o) => first(o) || second(o);
}

const CORE_EVENT: Record<string, Getter> = {
  'involvedObject.kind': path('involvedObject', 'kind'),
  'involvedObject.namespace': path('involvedObject', 'namespace'),
  'involvedObject.name': path('involvedObject', 'name'),
  'involvedObject.uid': path('involvedObject', 'uid'),
  'involvedObject.apiVersion': path('involvedObject', 'apiVersion'),
  'involvedObject.resourceVersion': path('involvedObject', 'resourceVersion'),
  'involvedObject.fieldPath': path('involvedObject', 'fieldPath'),
  reason: path('reason'),
  reportingComponent: path('reportingComponent'),
  // core/v1 names upstream's ReportingController `reportingComponent`.
  source: either(path('source', 'component'), path('reportingComponent')),
  type: path('type'),
};

/**
 * events.k8s.io/v1 Events: the field labels of upstream's AddFieldLabelConversionsForEvent
 * (pkg/apis/events/v1/conversion.go), read from the events.k8s.io/v1 form the registry converts the
 * stored core/v1 Events to; the core spellings (involvedObject.*, reportingComponent) are not accepted there.
 */
const EVENTS_V1_EVENT: Record<string, Getter> = {
  'regarding.kind': path('regarding', 'kind'),
  'regarding.namespace': path('regarding', 'namespace'),
  'regarding.name': path('regarding', 'name'),
  'regarding.uid': path('regarding', 'uid'),
  'regarding.apiVersion': path('regarding', 'apiVersion'),
  'regarding.resourceVersion': path('regarding', 'resourceVersion'),
  'regarding.fieldPath': path('regarding', 'fieldPath'),
  reason: path('reason'),
  reportingController: path('reportingController'),
  source: either(path('deprecatedSource', 'component'), path('reportingController')),
  type: path('type'),
};

interface Entry {
  extra: Record<string, Getter>;
  style: UnknownFieldStyle;
  /** Metadata fields the kind's conversion accepts (cluster kinds with custom conversions omit namespace). */
  meta: string[];
}

const BOTH = ['metadata.name', 'metadata.namespace'];
const TABLE: Record<string, Entry> = {
  '/Pod': { extra: POD, style: 'custom', meta: BOTH },
  '/Secret': { extra: { type: path('type') }, style: 'custom', meta: BOTH },
  '/Event': { extra: CORE_EVENT, style: 'custom', meta: BOTH },
  'events.k8s.io/Event': { extra: EVENTS_V1_EVENT, style: 'custom', meta: BOTH },
  '/Namespace': { extra: { 'status.phase': path('status', 'phase') }, style: 'custom', meta: ['metadata.name'] },
  '/Node': { extra: { 'spec.unschedulable': (o) => path('spec', 'unschedulable')(o) ?? 'false' }, style: 'custom', meta: ['metadata.name'] },
  'certificates.k8s.io/CertificateSigningRequest': {
    extra: { 'spec.signerName': path('spec', 'signerName') },
    style: 'custom',
    meta: ['metadata.name'],
  },
};

/** The selectable fields of a kind; kinds without an entry support metadata.name/namespace only. */
export function selectableFields(group: string, kind: string): SelectableFields {
  const e = TABLE[`${group}/${kind}`];
  if (!e) return { extra: {}, allowed: BOTH, unknownFieldStyle: 'generic' };
  return { extra: e.extra, allowed: [...e.meta, ...Object.keys(e.extra)], unknownFieldStyle: e.style };
}
