/**
 * The metav1.Time and MicroTime fields of every kind we serve, parsed on the way in as
 * kube-apiserver's decoder does and rewritten in its form: Time as RFC 3339 UTC to the second,
 * MicroTime with six fractional digits, the zero time as null. A malformed time is refused with
 * the Go decoder's own message. Create, update and every patch result pass through here
 * (negotiation.ts), so no strategy needs to care.
 */
import type { KObject } from '../../api/meta.js';
import { apiVersionOf } from '../../api/resources.js';
import { goJsonKind, isRecord } from '../../lib/json.js';
import { formatMicroTime, formatTime, isCanonicalTime, isZeroTime, MICRO_TIME_LAYOUT, parseGoTime, TIME_LAYOUT } from '../../lib/rfc3339.js';

type TimeKind = 'Time' | 'MicroTime';

/** A time field: its JSON path (`[]` walks a list), its type, and the Go struct that holds it. */
type TimeField = readonly [path: string, type: TimeKind, goStruct: string];

const META: readonly TimeField[] = [
  ['metadata.creationTimestamp', 'Time', 'ObjectMeta'],
  ['metadata.deletionTimestamp', 'Time', 'ObjectMeta'],
  ['metadata.managedFields[].time', 'Time', 'ManagedFieldsEntry'],
];

/** The started/finished times of a Pod's container statuses (k8s.io/api core/v1 ContainerState). */
const CONTAINER_STATE_TIMES: readonly TimeField[] = ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'].flatMap((list) =>
  ['state', 'lastState'].flatMap((state): TimeField[] => [
    [`status.${list}[].${state}.running.startedAt`, 'Time', 'ContainerStateRunning'],
    [`status.${list}[].${state}.terminated.startedAt`, 'Time', 'ContainerStateTerminated'],
    [`status.${list}[].${state}.terminated.finishedAt`, 'Time', 'ContainerStateTerminated'],
  ]),
);

/** By `apiVersion/kind`, from the k8s.io/api v1.32 types: every Time and MicroTime field. */
const BY_KIND: Readonly<Record<string, readonly TimeField[]>> = {
  'v1/Namespace': [['status.conditions[].lastTransitionTime', 'Time', 'NamespaceCondition']],
  'v1/Pod': [
    ['status.startTime', 'Time', 'PodStatus'],
    ['status.conditions[].lastProbeTime', 'Time', 'PodCondition'],
    ['status.conditions[].lastTransitionTime', 'Time', 'PodCondition'],
    ...CONTAINER_STATE_TIMES,
  ],
  'v1/Node': [
    ['spec.taints[].timeAdded', 'Time', 'Taint'],
    ['status.conditions[].lastHeartbeatTime', 'Time', 'NodeCondition'],
    ['status.conditions[].lastTransitionTime', 'Time', 'NodeCondition'],
  ],
  'v1/Event': [
    ['firstTimestamp', 'Time', 'Event'],
    ['lastTimestamp', 'Time', 'Event'],
    ['eventTime', 'MicroTime', 'Event'],
    ['series.lastObservedTime', 'MicroTime', 'EventSeries'],
  ],
  'events.k8s.io/v1/Event': [
    ['eventTime', 'MicroTime', 'Event'],
    ['deprecatedFirstTimestamp', 'Time', 'Event'],
    ['deprecatedLastTimestamp', 'Time', 'Event'],
    ['series.lastObservedTime', 'MicroTime', 'EventSeries'],
  ],
  'coordination.k8s.io/v1/Lease': [
    ['spec.acquireTime', 'MicroTime', 'LeaseSpec'],
    ['spec.renewTime', 'MicroTime', 'LeaseSpec'],
  ],
  'certificates.k8s.io/v1/CertificateSigningRequest': [
    ['status.conditions[].lastUpdateTime', 'Time', 'CertificateSigningRequestCondition'],
    ['status.conditions[].lastTransitionTime', 'Time', 'CertificateSigningRequestCondition'],
  ],
  'authentication.k8s.io/v1/TokenRequest': [['status.expirationTimestamp', 'Time', 'TokenRequestStatus']],
};

/** The time fields of a kind (metadata's included), for tests and for the walk below. */
export function timeFieldsOf(gvk: { group: string; version: string; kind: string }): readonly TimeField[] {
  return [...META, ...(BY_KIND[`${apiVersionOf(gvk)}/${gvk.kind}`] ?? [])];
}

/** The value a time field is stored as; throws the Go decoder's message for a malformed one. */
function normalize(v: unknown, [path, type, goStruct]: TimeField): unknown {
  if (v === null) return null;
  if (typeof v !== 'string') {
    // The decoder adds the struct and the field path to a type error (encoding/json addErrorContext).
    throw new Error(`json: cannot unmarshal ${goJsonKind(v)} into Go struct field ${goStruct}.${path.replaceAll('[]', '')} of type string`);
  }
  const layout = type === 'Time' ? TIME_LAYOUT : MICRO_TIME_LAYOUT;
  if (isCanonicalTime(v, layout)) return v;
  const t = parseGoTime(v, layout);
  if (isZeroTime(t)) return null;
  return type === 'Time' ? formatTime(t) : formatMicroTime(t);
}

/** Rewrites the field at `segments` under `node`; anything not shaped as the path expects is left alone. */
function walk(node: unknown, segments: readonly string[], field: TimeField): void {
  const [head, ...rest] = segments;
  if (head === undefined || !isRecord(node)) return;
  const list = head.endsWith('[]');
  const key = list ? head.slice(0, -2) : head;
  if (!Object.hasOwn(node, key)) return;
  const child = node[key];
  if (list) {
    if (Array.isArray(child)) for (const item of child) walk(item, rest, field);
  } else if (rest.length > 0) {
    walk(child, rest, field);
  } else if (child !== undefined) {
    node[key] = normalize(child, field);
  }
}

/**
 * Parses and rewrites, in place, every time field of `object` (of kind `gvk`). Throws an Error
 * with Go's message (time.ParseError or json.UnmarshalTypeError text) for a malformed one.
 */
export function normalizeTimeFields(object: KObject, gvk: { group: string; version: string; kind: string }): void {
  for (const field of timeFieldsOf(gvk)) walk(object, field[0].split('.'), field);
}
