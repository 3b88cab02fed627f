/**
 * core/v1 Events (upstream's pkg/registry/core/event): records created on update, checked by the
 * legacy Event rules only. They are also served as events.k8s.io/v1 (registry/events/), from the same
 * stored objects.
 */
import type { Event } from '../../../api/events.js';
import { findResource } from '../../../api/resources.js';
import type { Strategy, TableConvertor } from '../generic/strategy.js';
import { ageCell, column, NAME_COLUMN } from '../generic/table.js';
import { validatePathSegmentName } from '../../validation/names.js';
import { validateEventLegacy } from './event-validation.js';

const coreInfo = findResource('', 'v1', 'events');
if (!coreInfo) throw new Error('events missing from RESOURCES');

/** `component, instance`, falling back to the reporting fields (upstream formatEventSource; core/v1 names ReportingController `reportingComponent`). */
function source(obj: Event): string {
  const component = obj.source?.component || (obj.reportingComponent ?? '');
  const instance = obj.source?.host || (obj.reportingInstance ?? '');
  return instance ? `${component}, ${instance}` : component;
}

/** Last seen and count: a series overrides both, and a singleton event without a count counts once. */
function lastSeenAndCount(obj: Event, first: string, now: Date): [last: string, count: number] {
  const { series } = obj;
  if (series) return [ageCell(series.lastObservedTime ?? '', now), series.count ?? 0];
  const count = obj.count ?? 0;
  return [obj.lastTimestamp ? ageCell(obj.lastTimestamp, now) : first, count === 0 ? 1 : count];
}

/** The involved object as `kind/name` (kind lower-cased), and its field path. */
function objectCells(obj: Event): [target: string, fieldPath: string] {
  const io = obj.involvedObject ?? {};
  const kind = (io.kind ?? '').toLowerCase();
  return [io.name ? `${kind}/${io.name}` : kind, io.fieldPath ?? ''];
}

/**
 * The cells of upstream printEvent with Wide set (the server always prints wide; kubectl hides
 * priority-1 columns without `-o wide`).
 */
function eventCells(obj: Event, now: Date): unknown[] {
  const first = ageCell(obj.firstTimestamp || (obj.eventTime ?? ''), now);
  const [last, count] = lastSeenAndCount(obj, first, now);
  const [target, fieldPath] = objectCells(obj);
  return [
    last,
    obj.type ?? '',
    obj.reason ?? '',
    target,
    fieldPath,
    source(obj),
    (obj.message ?? '').trim(),
    first,
    count,
    obj.metadata?.name ?? '',
  ];
}

/** upstream's printEvent columns, for Events read through either group. */
export const eventTable: TableConvertor<Event> = {
  columns: [
    column('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
    column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
    column('Reason', 'string', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
    column('Object', 'string', 'The object that this event is about.'),
    column(
      'Subobject',
      'string',
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
      1,
    ),
    column('Source', 'string', 'The component reporting this event. Should be a short machine understandable string.', 1),
    column('Message', 'string', 'A human-readable description of the status of this operation.'),
    column('First Seen', 'string', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', 1),
    column('Count', 'string', 'The number of times this event has occurred.', 1),
    { ...NAME_COLUMN, priority: 1 },
  ],
  cells: eventCells,
};

export const coreEventStrategy: Strategy<Event> = {
  info: coreInfo,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  // Upstream's Event strategy validates no name: only the generic path-segment rule applies.
  validateName: validatePathSegmentName,
  validate: (obj) => validateEventLegacy(obj, 'v1'),
  validateUpdate: (obj) => validateEventLegacy(obj, 'v1'),
  table: eventTable,
};
