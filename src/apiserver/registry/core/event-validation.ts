/**
 * Event validation as upstream's pkg/apis/core/validation/events.go, on the core/v1 form (the
 * internal one upstream validates, hence its field paths: `message`, `involvedObject`, `source`;
 * the reporting controller is `reportingComponent` for a core/v1 request, `reportingController`
 * otherwise). Every Event passes the legacy rules; an Event created or updated through
 * events.k8s.io/v1 also passes the strict ones (ValidateEventCreate/Update with requestVersion).
 */
import type { Event } from '../../../api/events.js';
import { type FieldError, type GoSyntax, invalid, required } from '../../http/field-errors.js';
import { byteLength, isDns1123Subdomain, isQualifiedName, validateSubdomainName } from '../../validation/names.js';
import { validateObjectMeta } from '../../validation/object-meta.js';
import { deepEqual } from '../../../lib/json-value.js';
import { record } from '../../../lib/json.js';

const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
const ACTION_LENGTH_LIMIT = 128;
const REASON_LENGTH_LIMIT = 128;
const NOTE_LENGTH_LIMIT = 1024;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** Times are normalized on decode: the zero time is null (or absent). */
const isZero = (v: unknown): boolean => v === undefined || v === null || v === '';
const tooLong = (limit: number): string => `can have at most ${limit} characters`;

/** Where the request came in: its name for the reporting controller field in messages. */
export type EventRequestVersion = 'v1' | 'events.k8s.io/v1';

/** The reporting fields every "new" Event (one with an eventTime) must carry. */
function validateReporting(event: Event, version: EventRequestVersion): FieldError[] {
  const errs: FieldError[] = [];
  const controller = event.reportingComponent ?? '';
  const controllerField = version === 'v1' ? 'reportingComponent' : 'reportingController';
  if (controller === '') errs.push(required(controllerField));
  for (const m of isQualifiedName(controller)) errs.push(invalid(controllerField, controller, m));
  const limited = (field: 'reportingInstance' | 'action' | 'reason' | 'message', limit: number, mandatory: boolean): void => {
    const value = event[field] ?? '';
    if (mandatory && value === '') errs.push(required(field));
    // Go's len: bytes.
    if (byteLength(value) > limit) errs.push(invalid(field, '', tooLong(limit)));
  };
  limited('reportingInstance', REPORTING_INSTANCE_LENGTH_LIMIT, true);
  limited('action', ACTION_LENGTH_LIMIT, true);
  limited('reason', REASON_LENGTH_LIMIT, true);
  limited('message', NOTE_LENGTH_LIMIT, false);
  return errs;
}

/** legacyValidateEvent: namespace agreement, and the reporting fields of "new" Events (with eventTime). */
export function validateEventLegacy(event: Event, version: EventRequestVersion): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = event.metadata?.namespace ?? '';
  const involvedNamespace = event.involvedObject?.namespace ?? '';
  let agrees: boolean;
  if (isZero(event.eventTime)) {
    // Old clients wrote cluster-scoped objects' Events in "" or "default".
    agrees = involvedNamespace === '' ? namespace === '' || namespace === 'default' : namespace === involvedNamespace;
  } else {
    agrees = involvedNamespace !== '' || namespace === 'default' || namespace === 'kube-system';
  }
  if (!agrees) errs.push(invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'));
  if (!isZero(event.eventTime)) errs.push(...validateReporting(event, version));
  for (const m of isDns1123Subdomain(namespace)) errs.push(invalid('namespace', namespace, m));
  return errs;
}

/** validateV1EventSeries. */
function validateSeries(event: Event): FieldError[] {
  const { series } = event;
  if (series === undefined || series === null) return [];
  const errs: FieldError[] = [];
  if (typeof series.count !== 'number' || series.count < 2) errs.push(invalid('series.count', '', 'should be at least 2'));
  if (isZero(series.lastObservedTime)) errs.push(required('series.lastObservedTime'));
  return errs;
}

/** ValidateEventCreate for a request through events.k8s.io/v1. */
export function validateEventCreateStrict(event: Event): FieldError[] {
  const meta = event.metadata ?? {};
  const errs = validateEventLegacy(event, 'events.k8s.io/v1');
  // Only the name rule is stricter than the generic metadata validation every create gets.
  const names = validateObjectMeta(meta, { namespaced: true, nameValidator: validateSubdomainName });
  errs.push(...names.filter((e) => e.field === 'metadata.name' || e.field === 'metadata.generateName'));
  errs.push(...validateSeries(event));
  if (isZero(event.eventTime)) errs.push(required('eventTime'));
  const type = event.type ?? '';
  if (type !== 'Normal' && type !== 'Warning') errs.push(invalid('type', '', `has invalid value: ${type}`));
  for (const field of ['firstTimestamp', 'lastTimestamp']) {
    if (!isZero(event[field])) errs.push(invalid(field, '', 'needs to be unset'));
  }
  if (typeof event.count === 'number' && event.count !== 0) errs.push(invalid('count', '', 'needs to be unset'));
  const source = event.source ?? {};
  if ((source.component ?? '') !== '' || (source.host ?? '') !== '') errs.push(invalid('source', '', 'needs to be unset'));
  return errs;
}

const q = (v: unknown): string => JSON.stringify(str(v));
const goSyntax = (s: string): GoSyntax => ({ goSyntax: s });

/** `%#v` of a core.ObjectReference, as field.Invalid prints a struct. */
function objectReference(v: unknown): GoSyntax {
  const r = record(v);
  const parts = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map(
    (k, i) => `${['Kind', 'Namespace', 'Name', 'UID', 'APIVersion', 'ResourceVersion', 'FieldPath'][i]}:${q(r[k])}`,
  );
  return goSyntax(`core.ObjectReference{${parts.join(', ')}}`);
}

/** metav1.Time's String() (Go's time.Time format), which field.Invalid prints for a Stringer. */
function goTime(v: unknown): GoSyntax {
  if (typeof v !== 'string' || v === '') return goSyntax('0001-01-01 00:00:00 +0000 UTC');
  const [date = '', clock = ''] = v.replace(/Z$/, '').split('T');
  return goSyntax(`${date} ${clock.replace(/\.?0+$/, '')} +0000 UTC`);
}

/** The immutable fields of ValidateEventUpdate, each with how field.Invalid prints its old/new value. */
const IMMUTABLE: readonly (readonly [field: string, path: string, show: (v: unknown) => unknown])[] = [
  ['involvedObject', 'involvedObject', objectReference],
  ['reason', 'reason', str],
  ['message', 'message', str],
  ['source', 'source', (v) => goSyntax(`core.EventSource{Component:${q(record(v).component)}, Host:${q(record(v).host)}}`)],
  ['firstTimestamp', 'firstTimestamp', goTime],
  ['lastTimestamp', 'lastTimestamp', goTime],
  ['count', 'count', (v) => (typeof v === 'number' ? v : 0)],
  ['type', 'type', str],
  ['eventTime', 'eventTime', goTime],
  ['action', 'action', str],
  ['related', 'related', (v) => (v === undefined || v === null ? null : objectReference(v))],
  ['reportingComponent', 'reportingController', str],
  ['reportingInstance', 'reportingInstance', str],
];

/** A value with its zero parts left out: JSON may omit or carry them, a typed comparison sees no difference. */
function withoutZeros(v: unknown): unknown {
  if (v === null || v === '' || v === 0 || v === false) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) return v;
  const kept = Object.entries(record(v))
    .map(([k, x]) => [k, withoutZeros(x)] as const)
    .filter(([, x]) => x !== undefined);
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

const sameValue = (a: unknown, b: unknown): boolean => deepEqual(withoutZeros(a), withoutZeros(b));

/** ValidateEventUpdate for a request through events.k8s.io/v1 (metadata's rules run generically). */
export function validateEventUpdateStrict(event: Event, old: Event): FieldError[] {
  const errs = validateEventLegacy(event, 'events.k8s.io/v1');
  if (!sameValue(event.series, old.series)) errs.push(...validateSeries(event));
  // Upstream lists `reason` twice; its Invalid error collapses repeated messages, so once here.
  for (const [field, path, show] of IMMUTABLE) {
    if (!sameValue(event[field], old[field])) errs.push(invalid(path, show(event[field]), 'field is immutable'));
  }
  return errs;
}
