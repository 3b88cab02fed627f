/**
 * The metav1.Time and MicroTime fields of every kind we serve, parsed on the way in as
 * kube-apiserver's decoder does and rewritten in its form: Time as RFC 3339 UTC to the second,
 * MicroTime with six fractional digits, the zero time as null. A malformed time is refused with
 * the Go decoder's own message. Create, update and every patch result pass through here
 * (negotiation.ts), so no strategy needs to care. The fields are found by the decode's one walk
 * (validation/object-decode.ts), wherever they sit: some, such as a Pod's container states, lie
 * under free-form parts of the schema.
 */
import { apiVersionOf } from '../../api/resources.js';
import { goJsonKind } from '../../lib/json.js';
import type { FieldMark, FieldMarks } from '../openapi/schema-walk.js';
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

/** A time field as the walk marks it: its place in the kind's table decides which error is reported first. */
export interface TimeMark {
  readonly order: number;
  readonly field: TimeField;
}

/** A time field found in an object: `parent[key]`. */
export interface TimeHit {
  readonly parent: Record<string, unknown>;
  readonly key: string;
  readonly mark: TimeMark;
}

interface MarkBuilder {
  mark?: TimeMark;
  list?: boolean;
  next?: Map<string, MarkBuilder>;
}

/** The time fields of a kind as marks for the walk: a tree of their paths. */
export function timeMarks(gvk: { group: string; version: string; kind: string }): FieldMarks<TimeMark> {
  const root = new Map<string, MarkBuilder>();
  timeFieldsOf(gvk).forEach((field, order) => {
    let level = root;
    const segments = field[0].split('.');
    segments.forEach((segment, i) => {
      const list = segment.endsWith('[]');
      const name = list ? segment.slice(0, -2) : segment;
      let node = level.get(name);
      if (!node) level.set(name, (node = {}));
      if (i === segments.length - 1) node.mark = { order, field };
      else {
        node.list = list;
        level = node.next ??= new Map();
      }
    });
  });
  return root as ReadonlyMap<string, FieldMark<TimeMark>>;
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

/**
 * Parses and rewrites, in place, the time fields a walk found, in the order the Go decoder meets
 * them (the kind's table, then the document). Throws an Error with Go's message (time.ParseError
 * or json.UnmarshalTypeError text) for the first malformed one.
 */
export function normalizeTimeFields(hits: readonly TimeHit[]): void {
  const ordered = hits.length > 1 ? [...hits].sort((a, b) => a.mark.order - b.mark.order) : hits;
  for (const { parent, key, mark } of ordered) parent[key] = normalize(parent[key], mark.field);
}
