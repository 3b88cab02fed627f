/**
 * Where a watch starts (the cacher's start resolution upstream): from now, after a given revision,
 * or with synthetic ADDED events for the current state first (rv unset or "0", or sendInitialEvents).
 */
import type { KObject } from '../../api/meta.js';
import { waitForRevision } from '../registry/generic/list.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { Selection } from '../registry/generic/selection.js';
import type { ListOptions } from '../registry/generic/types.js';

export interface WatchStart {
  /** Events after this revision are streamed. */
  revision: number;
  /** Objects to send as ADDED first (those the selection matches), then the initial-events-end bookmark. */
  initial: KObject[];
  sendInitialEvents: boolean;
}

export async function resolveWatchStart(registry: GenericRegistry, prefix: string, opts: ListOptions, selection: Selection): Promise<WatchStart> {
  const rv = opts.resourceVersion;
  const fromNow = rv === '' || rv === '0';
  const sendInitialEvents = opts.sendInitialEvents ?? fromNow;
  if (sendInitialEvents) {
    if (!fromNow) await waitForRevision(registry, Number(rv));
    const all = await registry.store.range({ prefix });
    return { revision: all.revision, initial: all.items.map((i) => i.object).filter((o) => selection.matches(o)), sendInitialEvents };
  }
  if (fromNow) return { revision: registry.store.currentRevision(), initial: [], sendInitialEvents };
  const revision = Number(rv);
  await waitForRevision(registry, revision);
  return { revision, initial: [], sendInitialEvents };
}
