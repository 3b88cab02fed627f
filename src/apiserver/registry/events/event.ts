/**
 * events.k8s.io/v1 Events (upstream's pkg/registry/events): not a resource of their own but the core/v1
 * Events seen in another version. They are stored once, as core/v1 at the core Events' keys, and
 * converted on every read and write (ConvertedStore), so an Event written through either group is read,
 * listed, watched, updated, patched and deleted through the other. Writes through this group also pass
 * upstream's strict Event rules; both groups print the same table.
 */
import type { KObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import type { Store } from '../../storage/store.js';
import { storageKey } from '../../storage/store.js';
import { eventTable } from '../core/event.js';
import { ConvertedStore } from '../generic/converted-store.js';
import type { Strategy } from '../generic/strategy.js';
import { validatePathSegmentName } from '../../validation/names.js';
import { toCoreEvent, toEventsV1Event } from './conversion.js';
import { validateEventCreateStrict, validateEventUpdateStrict } from '../core/event-validation.js';

const info = findResource('events.k8s.io', 'v1', 'events');
if (!info) throw new Error('events.k8s.io events missing from RESOURCES');

/** Where events.k8s.io/v1 Events live: the core/v1 Events (`/registry/events/` in etcd). */
export const EVENTS_STORAGE_PREFIX = storageKey('', 'events', undefined);
/**
 * The keys the events.k8s.io registry asks for (its group's storageKey), mapped onto the core Events.
 * Before the two shared storage, this server kept events.k8s.io Events there for real (etcd:
 * `/registry/events.k8s.io/events/`); migrateEventsV1Storage moves such old data.
 */
export const EVENTS_V1_PREFIX = storageKey('events.k8s.io', 'events', undefined);

export const eventsV1Strategy: Strategy = {
  info,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  // The generic rule; the stricter DNS-subdomain rule of events.k8s.io applies to creates only.
  validateName: validatePathSegmentName,
  invalidGroup: '',
  validate: (obj) => validateEventCreateStrict(toCoreEvent(obj)),
  validateUpdate: (obj, old) => validateEventUpdateStrict(toCoreEvent(obj), toCoreEvent(old)),
  table: { columns: eventTable.columns, cells: (obj: KObject, now: Date) => eventTable.cells(toCoreEvent(obj), now) },
};

/** The store the events.k8s.io/v1 registry works on: the core Events, converted. */
export function eventsV1Store(store: Store): Store {
  return new ConvertedStore(store, {
    viewPrefix: EVENTS_V1_PREFIX,
    storagePrefix: EVENTS_STORAGE_PREFIX,
    fromStorage: toEventsV1Event,
    toStorage: toCoreEvent,
  });
}
