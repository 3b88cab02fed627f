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
 */
import type { KObject } from '../../../api/meta.js';

/** [events.k8s.io/v1 name, core/v1 name] of every Event field. */
const FIELDS: readonly (readonly [string, string])[] = [
  ['metadata', 'metadata'],
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

/** Copies the fields of `from` under their names on the other side; values are shared, not copied. */
function convert(from: KObject, apiVersion: string, fromSide: 0 | 1): KObject {
  const out: KObject = { apiVersion, kind: 'Event' };
  for (const pair of FIELDS) {
    const value = from[pair[fromSide]];
    if (value !== undefined) out[pair[fromSide === 0 ? 1 : 0]] = value;
  }
  return out;
}

/** Convert_v1_Event_To_core_Event. */
export function toCoreEvent(event: KObject): KObject {
  return convert(event, CORE_API_VERSION, 0);
}

/** Convert_core_Event_To_v1_Event. */
export function toEventsV1Event(event: KObject): KObject {
  return convert(event, EVENTS_V1_API_VERSION, 1);
}
