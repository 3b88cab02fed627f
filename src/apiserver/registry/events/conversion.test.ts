/**
 * The Event conversion against upstream's golden round-trip fixtures (k8s.io/api testdata: every
 * field of core/v1 and events.k8s.io/v1 Event filled in): nothing is dropped either way, and the
 * renamed fields are the ones pkg/apis/events/v1/conversion.go names.
 */
import { itWithFixtures, readFixtureJson } from '../../../../test/helpers/fixtures.js';
import { toCoreEvent, toEventsV1Event } from './conversion.js';

itWithFixtures('converts every events.k8s.io/v1 field to core/v1 and back unchanged', () => {
  const v1 = readFixtureJson('events.k8s.io.v1.Event.json');
  const core = toCoreEvent(v1);
  expect(Object.keys(core).sort()).toEqual(Object.keys(readFixtureJson('core.v1.Event.json')).sort());
  expect(core).toMatchObject({
    apiVersion: 'v1',
    message: v1.note,
    involvedObject: v1.regarding,
    source: v1.deprecatedSource,
    firstTimestamp: v1.deprecatedFirstTimestamp,
    lastTimestamp: v1.deprecatedLastTimestamp,
    count: v1.deprecatedCount,
    reportingComponent: v1.reportingController,
    reportingInstance: v1.reportingInstance,
    series: v1.series,
    related: v1.related,
    metadata: v1.metadata,
  });
  expect(toEventsV1Event(core)).toEqual(v1);
});

itWithFixtures('converts every core/v1 field to events.k8s.io/v1 and back unchanged', () => {
  const core = readFixtureJson('core.v1.Event.json');
  const v1 = toEventsV1Event(core);
  expect(Object.keys(v1).sort()).toEqual(Object.keys(readFixtureJson('events.k8s.io.v1.Event.json')).sort());
  expect(v1.apiVersion).toBe('events.k8s.io/v1');
  expect(toCoreEvent(v1)).toEqual(core);
});

it('drops what the target version has no field for, as a typed conversion does', () => {
  expect(toCoreEvent({ apiVersion: 'events.k8s.io/v1', kind: 'Event', message: 'core name', note: 'n' })).toEqual({ apiVersion: 'v1', kind: 'Event', message: 'n' });
});

it("renames the fields of managedFields entries recorded in the source version, and only those", () => {
  const entry = (apiVersion: string, fields: string[]) => ({
    manager: 'm',
    operation: 'Apply' as const,
    apiVersion,
    fieldsType: 'FieldsV1' as const,
    fieldsV1: Object.fromEntries(fields.map((f) => [f, {}])),
  });
  const v1 = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'e', managedFields: [entry('events.k8s.io/v1', ['f:note', 'f:regarding', 'f:reason', 'f:metadata']), entry('other/v9', ['f:note'])] },
  };
  const core = toCoreEvent(v1);
  expect(core.metadata?.managedFields).toEqual([entry('v1', ['f:message', 'f:involvedObject', 'f:reason', 'f:metadata']), entry('other/v9', ['f:note'])]);
  expect(toEventsV1Event(core)).toEqual(v1);
  // The argument is left as it was.
  expect(v1.metadata.managedFields[0]?.apiVersion).toBe('events.k8s.io/v1');
});
