/**
 * events.k8s.io/v1 Event <-> core/v1 Event, field for field as upstream's pkg/apis/events/v1
 * conversion (Convert_v1_Event_To_core_Event and back). Both groups serve one stored resource whose
 * storage version is core/v1, so every events.k8s.io read and write goes through here.
 *
 * Renamed: regarding <-> involvedObject, note <-> message, deprecatedSource <-> source,
 * deprecatedFirstTimestamp/deprecatedLastTimestamp/deprecatedCount <-> firstTimestamp/lastTimestamp/count,
 * reportingController <-> reportingComponent (the JSON name of core's ReportingController field).
 * The same in both: metadata, eventTime, series (count, lastObservedTime), related, reportingInstance,
 * action, reason, type. Fields neither version has are dropped, as a typed conversion drops them.
 *
 * managedFields entries recorded in the source version are converted too (the renamed top-level
 * fields, and their apiVersion), so server-side apply compares one version's field sets whichever
 * group each manager wrote through (upstream converts the objects to each manager's version instead).
 */
import type { Event } from '../../../api/events.js';
import type { KObject, ManagedFieldsEntry, ObjectMeta } from '../../../api/meta.js';

/** [events.k8s.io/v1 name, core/v1 name] of every Event field but metadata. */
const FIELDS: readonly (readonly [string, string])[] = [
  ['eventTime', 'eventTime'],
  ['series', 'series'],
  ['reportingController', 'reportingComponent'],
  ['reportingInstance', 'reportingInstance'],
  ['action', 'action'],
  ['reason', 'reason'],
  ['regarding', 'involvedObject'],
  ['related', 'related'],
  ['note', 'message'],
  ['type', 'type'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

export const EVENTS_V1_API_VERSION = 'events.k8s.io/v1';
export const CORE_API_VERSION = 'v1';

type Side = 0 | 1;
const API_VERSIONS: readonly [string, string] = [EVENTS_V1_API_VERSION, CORE_API_VERSION];

/** FieldsV1 keys, from each side to the other. */
const RENAMED: readonly [Map<string, string>, Map<string, string>] = [
  new Map(FIELDS.map(([v1, core]) => [`f:${v1}`, `f:${core}`])),
  new Map(FIELDS.map(([v1, core]) => [`f:${core}`, `f:${v1}`])),
];

/** A managedFields entry recorded in the source version, with its top-level fields renamed. */
function convertEntry(entry: ManagedFieldsEntry, fromSide: Side): ManagedFieldsEntry {
  if (entry.apiVersion !== API_VERSIONS[fromSide] || !entry.fieldsV1) return entry;
  const toSide = fromSide === 0 ? 1 : 0;
  const renamed = RENAMED[fromSide];
  const fieldsV1 = Object.fromEntries(Object.entries(entry.fieldsV1).map(([k, v]) => [renamed.get(k) ?? k, v]));
  return { ...entry, apiVersion: API_VERSIONS[toSide], fieldsV1 };
}

function convertMeta(meta: ObjectMeta, fromSide: Side): ObjectMeta {
  if (!meta.managedFields) return meta;
  return { ...meta, managedFields: meta.managedFields.map((e) => convertEntry(e, fromSide)) };
}

/** Copies the fields of `from` under their names on the other side; values are shared, not copied. */
function convert(from: KObject, fromSide: Side): KObject {
  const toSide = fromSide === 0 ? 1 : 0;
  const out: KObject = { apiVersion: API_VERSIONS[toSide], kind: 'Event' };
  if (from.metadata) out.metadata = convertMeta(from.metadata, fromSide);
  for (const pair of FIELDS) {
    const value = from[pair[fromSide]];
    if (value !== undefined) out[pair[toSide]] = value;
  }
  return out;
}

/** Convert_v1_Event_To_core_Event: a core Event, as the events.k8s.io schema typed the fields it renames. */
export function toCoreEvent(event: KObject): Event {
  return convert(event, 0);
}

/** Convert_core_Event_To_v1_Event. */
export function toEventsV1Event(event: KObject): KObject {
  return convert(event, 1);
}
