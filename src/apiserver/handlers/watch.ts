/**
 * WATCH: a chunked stream of compact JSON events, one per line. It starts with synthetic ADDED
 * events (rv unset or "0", or sendInitialEvents) or resumes after a given revision, applies
 * selectors to every event (objects entering or leaving the selection become ADDED or DELETED),
 * sends bookmarks on request and ends cleanly on timeout, disconnect or shutdown.
 */
import type { KObject, WatchEventType } from '../../api/meta.js';
import { apiVersionOf } from '../../api/resources.js';
import { errors, toApiError } from '../errors.js';
import { compactJson } from '../../lib/frozen-json.js';
import { waitForRevision } from '../registry/generic/list.js';
import { buildSelection } from '../registry/generic/selection.js';
import { type StoreEvent, StoreError, type WatchHandle } from '../storage/store.js';
import { parseListOptions } from './list-options.js';
import { type RequestScope, outputOf } from './scope.js';
import { type IncludeObject, parseIncludeObject, partialObject, tableOf } from './table.js';

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
/** Upstream picks a random timeout in [min-request-timeout, 2×min-request-timeout], 1800 s by default. */
const DEFAULT_MIN_TIMEOUT_S = 1800;

function withRevision(obj: KObject, revision: number): KObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
}

export async function handleWatch(scope: RequestScope): Promise<void> {
  const { info, registry, res } = scope;
  const opts = parseListOptions(scope.query, true);
  let fieldSelector = opts.fieldSelector;
  if (!info.collection && info.name !== undefined) {
    fieldSelector = [fieldSelector, `metadata.name=${info.name}`].filter((s) => s !== '').join(',');
  }
  const selection = buildSelection(scope.strategy, opts.labelSelector, fieldSelector);
  const out = outputOf(scope, true);
  const include: IncludeObject = out.kind === 'table' ? parseIncludeObject(scope.query) : 'Metadata';
  const store = registry.store;
  const prefix = registry.prefix(info.namespace);
  const rv = opts.resourceVersion;
  const fromNow = rv === '' || rv === '0';
  const sendInitial = opts.sendInitialEvents ?? fromNow;

  let startRev: number;
  let initial: KObject[] = [];
  if (sendInitial) {
    if (!fromNow) await waitForRevision(registry, Number(rv));
    const all = await store.range({ prefix });
    startRev = all.revision;
    initial = all.items.map((i) => i.object).filter((o) => selection.matches(o));
  } else if (fromNow) {
    startRev = store.currentRevision();
  } else {
    startRev = Number(rv);
    await waitForRevision(registry, startRev);
  }

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();

  let ended = false;
  let firstTable = true;
  const wire = (obj: KObject): object => {
    if (out.kind === 'table') {
      const t = tableOf(scope.strategy, [obj], { resourceVersion: obj.metadata?.resourceVersion ?? '' }, include, out.metaVersion, new Date(), firstTable);
      firstTable = false;
      return t;
    }
    return out.kind === 'partial' ? partialObject(obj, out.metaVersion) : obj;
  };
  // Events published in one turn (a committed group of writes) leave in one socket write, not one each.
  let corked = false;
  const uncork = (): void => {
    corked = false;
    // end() has already uncorked fully; the socket may serve another response by now.
    if (!ended) res.uncork();
  };
  /** One event line, as JSON.stringify of a WatchEvent gives it, reusing the stored object's encoding. */
  const send = (type: WatchEventType, object: object): void => {
    if (ended) return;
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    res.write(`{"type":${JSON.stringify(type)},"object":${compactJson(object)}}\n`);
  };
  const bookmark = (revision: number, initialEnd: boolean): void => {
    const metadata: Record<string, unknown> = { resourceVersion: String(revision), creationTimestamp: null };
    if (initialEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
    send('BOOKMARK', { kind: registry.info.kind, apiVersion: apiVersionOf(registry.info), metadata });
  };

  return new Promise<void>((resolve) => {
    let handle: WatchHandle | undefined;
    const timers: { bookmark?: NodeJS.Timeout; timeout?: NodeJS.Timeout } = {};
    const end = (): void => {
      if (ended) return;
      ended = true;
      handle?.stop();
      clearTimeout(timers.bookmark);
      clearTimeout(timers.timeout);
      untrack();
      res.end();
      resolve();
    };
    const untrack = scope.trackWatch(end);
    const fail = (err: StoreError): void => {
      const oldest = err.revision ?? store.compactedRevision();
      const status =
        err.code === 'Compacted'
          ? errors.expired(`too old resource version: ${startRev} (${oldest - 1})`).toStatus()
          : toApiError(err).toStatus();
      send('ERROR', status);
      end();
    };
    res.on('close', end);
    scope.req.on('close', () => {
      if (!res.writableEnded) end();
    });

    let progress = startRev;
    for (const obj of initial) send('ADDED', wire(obj));
    if (sendInitial && opts.allowWatchBookmarks) bookmark(startRev, true);

    const onEvent = (ev: StoreEvent): void => {
      progress = ev.revision;
      const now = selection.matches(ev.object);
      if (ev.type === 'ADDED') {
        if (now) send('ADDED', wire(ev.object));
      } else if (ev.type === 'DELETED') {
        if (now) send('DELETED', wire(ev.object));
      } else {
        const before = selection.empty || selection.matches(ev.prevObject);
        if (now && before) send('MODIFIED', wire(ev.object));
        else if (now) send('ADDED', wire(ev.object));
        else if (before && ev.prevObject) send('DELETED', wire(withRevision(ev.prevObject, ev.revision)));
      }
    };
    try {
      // etcd's progress notifications move the next bookmark past revisions with no event for this watch.
      const onProgress = (revision: number): void => {
        progress = Math.max(progress, revision);
      };
      handle = store.watch(prefix, { fromRevision: startRev, onEvent, onError: fail, onProgress });
      if (ended) handle.stop();
    } catch (e) {
      if (e instanceof StoreError) {
        fail(e);
        return;
      }
      throw e;
    }
    if (opts.allowWatchBookmarks) {
      const tick = (): void => {
        bookmark(progress, false);
        timers.bookmark = setTimeout(tick, scope.bookmarkIntervalMs);
      };
      timers.bookmark = setTimeout(tick, scope.bookmarkIntervalMs);
    }
    const timeoutS = opts.timeoutSeconds || DEFAULT_MIN_TIMEOUT_S * (1 + Math.random());
    timers.timeout = setTimeout(end, timeoutS * 1000);
  });
}
