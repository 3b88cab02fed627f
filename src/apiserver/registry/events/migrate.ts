/**
 * The upgrade step for data written before core/v1 and events.k8s.io/v1 Events shared storage: an
 * events.k8s.io Event still kept at its own key is moved, converted to core/v1, to the core Events'
 * key of the same namespace and name, keeping its uid and timestamps. Runs on every start (a no-op once
 * done) and is safe with several servers on one etcd: the move is a create-if-absent and a delete at
 * the revision read. Where both keys hold an Event of one name (possible only in old data), the core
 * one is kept.
 */
import { type Store, StoreError } from '../../storage/store.js';
import { toCoreEvent } from './conversion.js';
import { EVENTS_STORAGE_PREFIX, EVENTS_V1_PREFIX } from './event.js';

const ignoring = async (codes: StoreError['code'][], p: Promise<unknown>): Promise<void> => {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof StoreError && codes.includes(e.code))) throw e;
  }
};

/** Moves every legacy events.k8s.io Event; returns how many were moved. */
export async function migrateEventsV1Storage(store: Store): Promise<number> {
  const legacy = await store.range({ prefix: EVENTS_V1_PREFIX });
  let moved = 0;
  for (const item of legacy.items) {
    const event = toCoreEvent(item.object);
    event.metadata = { ...event.metadata };
    delete event.metadata.resourceVersion;
    const key = EVENTS_STORAGE_PREFIX + item.key.slice(EVENTS_V1_PREFIX.length);
    await ignoring(['KeyExists'], store.create(key, event));
    await ignoring(['Conflict', 'KeyNotFound'], store.delete(item.key, item.revision));
    moved++;
  }
  return moved;
}
