/**
 * WATCH, assembled as kube-apiserver's: where it starts (watch-start.ts), per-watcher selection of
 * store events (watch-filter.ts) and the HTTP stream (watch-stream.ts); here the wiring between
 * them, bookmarks, the timeout, and the ends (timeout, disconnect, shutdown, a client too slow).
 */
import type { KObject, Status, WatchEventType } from '../../api/meta.js';
import { apiVersionOf } from '../../api/resources.js';
import { errors, toApiError } from '../http/errors.js';
import { buildSelection, type Selection } from '../registry/generic/selection.js';
import { type Store, StoreError, type StoreEvent, type WatchHandle, type WatchTrigger } from '../storage/store.js';
import { parseListOptions } from './list-options.js';
import { type RequestScope, outputOf } from './scope.js';
import { type IncludeObject, parseIncludeObject, tableOf } from './table.js';
import { type EventRepresentation, encodeLine, eventLine, textLine } from '../codec/json-responses.js';
import { resolveWatchStart } from './watch-start.js';
import { selectEvent } from './watch-filter.js';
import { WatchStream } from './watch-stream.js';

/** Upstream picks a random timeout in [min-request-timeout, 2×min-request-timeout], 1800 s by default. */
const DEFAULT_MIN_TIMEOUT_S = 1800;

/** How events carry their object: itself, its PartialObjectMetadata, or a one-row Table (negotiated before the stream starts). */
type WatchOutput = EventRepresentation | { kind: 'table'; metaVersion: string; include: IncludeObject };

function watchOutput(scope: RequestScope): WatchOutput {
  const out = outputOf(scope, true);
  if (out.kind === 'table') return { kind: 'table', metaVersion: out.metaVersion, include: parseIncludeObject(scope.query) };
  return out.kind === 'partial' ? { kind: 'partial', metaVersion: out.metaVersion } : { kind: 'object' };
}

/** Sends each event: a stored object's line is shared by the event's watchers; a Table row is this watcher's own. */
function emitter(scope: RequestScope, out: WatchOutput, stream: WatchStream): (type: WatchEventType, obj: KObject, initial: boolean) => void {
  if (out.kind !== 'table') return (type, obj, initial) => stream.sendLine(initial ? encodeLine(type, obj, out) : eventLine(type, obj, out), initial);
  let firstTable = true;
  return (type, obj, initial) => {
    const meta = { resourceVersion: obj.metadata?.resourceVersion ?? '' };
    const t = tableOf(scope.strategy, [obj], meta, { include: out.include, metaVersion: out.metaVersion, now: new Date(), withColumns: firstTable });
    firstTable = false;
    stream.send(type, t, initial);
  };
}

/** The ERROR event's Status for a watch the store cannot serve: 410 Expired past the kept history. */
function errorStatus(err: StoreError, startRevision: number, store: Store): Status {
  if (err.code !== 'Compacted') return toApiError(err).toStatus();
  const oldest = err.revision ?? store.compactedRevision();
  return errors.expired(`too old resource version: ${startRevision} (${oldest - 1})`).toStatus();
}

/** What the store may index this watch by: its object's name, or for pods their node (kubelets' watches). */
function triggerOf(scope: RequestScope, selection: Selection): WatchTrigger | undefined {
  const name = selection.exact('metadata.name');
  if (name !== undefined) return { field: 'metadata.name', value: name };
  const info = scope.registry.info;
  const nodeName = info.group === '' && info.plural === 'pods' ? selection.exact('spec.nodeName') : undefined;
  return nodeName === undefined ? undefined : { field: 'spec.nodeName', value: nodeName };
}

export async function handleWatch(scope: RequestScope): Promise<void> {
  const { info, registry } = scope;
  const opts = parseListOptions(scope.query, true);
  let fieldSelector = opts.fieldSelector;
  if (!info.collection && info.name !== undefined) {
    fieldSelector = [fieldSelector, `metadata.name=${info.name}`].filter((s) => s !== '').join(',');
  }
  const selection = buildSelection(scope.strategy, opts.labelSelector, fieldSelector);
  const out = watchOutput(scope);
  const prefix = registry.prefix(info.namespace);
  const start = await resolveWatchStart(registry, prefix, opts, selection);

  return new Promise<void>((resolve) => {
    let handle: WatchHandle | undefined;
    let ended = false;
    const timers: { bookmark?: NodeJS.Timeout; timeout?: NodeJS.Timeout } = {};
    const end = (slow = false): void => {
      if (ended) return;
      ended = true;
      handle?.stop();
      clearTimeout(timers.bookmark);
      clearTimeout(timers.timeout);
      untrack(slow);
      stream.end();
      resolve();
    };
    const stream = new WatchStream(scope.res, {
      kind: registry.info.kind,
      apiVersion: apiVersionOf(registry.info),
      bufferBytes: scope.watchBufferBytes,
      onOverflow: () => end(true),
    });
    stream.start();
    const emit = emitter(scope, out, stream);
    void scope.audit?.started(200);
    const untrack = scope.trackWatch(() => end());
    const fail = (err: StoreError): void => {
      stream.send('ERROR', errorStatus(err, start.revision, registry.store));
      end();
    };
    scope.res.on('close', () => end());
    scope.req.on('close', () => {
      if (!scope.res.writableEnded) end();
    });

    let progress = start.revision;
    for (const obj of start.initial) emit('ADDED', obj, true);
    if (start.sendInitialEvents && opts.allowWatchBookmarks) stream.bookmark(start.revision, true);

    // The history a resumed watch replays is its initial state, like the current state of a list:
    // only events written after the watch started count against its budget.
    const backlogUntil = registry.store.currentRevision();
    // Without a selector every event goes out as it is: its text, where the store has it, saves parsing it.
    const relay = selection.empty && out.kind === 'object';
    const onEvent = (ev: StoreEvent): void => {
      progress = ev.revision;
      if (relay && ev.text !== undefined) {
        stream.sendLine(textLine(ev.type, ev.text), ev.revision <= backlogUntil);
        return;
      }
      const selected = selectEvent(ev, selection);
      if (selected) emit(selected.type, selected.object, ev.revision <= backlogUntil);
    };
    // etcd's progress notifications move the next bookmark past revisions with no event for this watch.
    const onProgress = (revision: number): void => {
      progress = Math.max(progress, revision);
    };
    try {
      handle = registry.store.watch(prefix, { fromRevision: start.revision, onEvent, onError: fail, onProgress, trigger: triggerOf(scope, selection), relay });
      if (ended) handle.stop();
    } catch (e) {
      if (e instanceof StoreError) return fail(e);
      throw e;
    }
    if (opts.allowWatchBookmarks) {
      const tick = (): void => {
        stream.bookmark(progress, false);
        timers.bookmark = setTimeout(tick, scope.bookmarkIntervalMs);
      };
      timers.bookmark = setTimeout(tick, scope.bookmarkIntervalMs);
    }
    const timeoutS = opts.timeoutSeconds || DEFAULT_MIN_TIMEOUT_S * (1 + Math.random());
    timers.timeout = setTimeout(() => end(), timeoutS * 1000);
  });
}
