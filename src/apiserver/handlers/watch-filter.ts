/**
 * Per-watcher filtering of store events (the cache watcher's event conversion upstream): an object
 * entering the selection is ADDED, one leaving it is DELETED (in its last selected state, at the
 * revision it left), and events of objects outside the selection are not sent.
 */
import type { KObject, WatchEventType } from '../../api/meta.js';
import type { Selection } from '../registry/generic/selection.js';
import type { StoreEvent } from '../storage/store.js';

export interface SelectedEvent {
  type: WatchEventType;
  object: KObject;
}

function withRevision(obj: KObject, revision: number): KObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
}

/** The event a watcher with `selection` sends for `ev`, or undefined when it sends none. */
export function selectEvent(ev: StoreEvent, selection: Selection): SelectedEvent | undefined {
  const now = selection.matches(ev.object);
  if (ev.type === 'ADDED' || ev.type === 'DELETED') return now ? { type: ev.type, object: ev.object } : undefined;
  const before = selection.empty || selection.matches(ev.prevObject);
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: ev.object };
  if (before && ev.prevObject) return { type: 'DELETED', object: withRevision(ev.prevObject, ev.revision) };
  return undefined;
}
