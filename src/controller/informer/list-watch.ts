/**
 * The two calls an informer needs, as a small interface so tests can script them and the real
 * implementation can sit on KubeClient (measured): paginated LIST, and WATCH as a streaming GET of
 * newline-delimited JSON events with bookmarks and a server-side timeout.
 */
import type { KList, KObject, WatchEvent } from '../../api/meta.js';
import { JsonLinesReader } from '../client/json-lines.js';
import { statusError, type KubeClient } from '../client/kube-client.js';

export interface ListOptions {
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions {
  resourceVersion: string;
  allowWatchBookmarks: boolean;
  timeoutSeconds: number;
}

export interface WatchCallbacks<T> {
  onEvent(event: WatchEvent<T>): void;
  /**
   * Called once when the stream ends: without an error for a clean close (the server finished the
   * body, or `stop()`), with one for a failed request, a non-200 reply (HttpStatusError with the
   * Status), a broken connection or an unparseable line.
   */
  onDone(err?: unknown): void;
}

export interface WatchHandle {
  /** Ends the stream; `onDone` may or may not follow (it does here, once), callers must not depend on it. */
  stop(): void;
}

export interface ListWatch<T extends KObject = KObject> {
  list(opts: ListOptions, signal?: AbortSignal): Promise<KList<T>>;
  /** Resolves once the stream is open (or has already failed through `onDone`). Never rejects. */
  watch(opts: WatchOptions, cb: WatchCallbacks<T>): Promise<WatchHandle>;
}

/** Which collection to list and watch. */
export interface ResourceRef {
  group: string;
  version: string;
  plural: string;
  /** Only for namespaced resources: restricts to one namespace; omit for all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export function collectionPath(ref: ResourceRef): string {
  const prefix = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const ns = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  return `${prefix}${ns}/${ref.plural}`;
}

/** The production ListWatch: LIST and a streaming WATCH, both on KubeClient's transport. */
export function clientListWatch<T extends KObject = KObject>(client: KubeClient, ref: ResourceRef): ListWatch<T> {
  const path = collectionPath(ref);
  const selectors = { labelSelector: ref.labelSelector, fieldSelector: ref.fieldSelector };
  return {
    list: (opts, signal) =>
      client.requestJSON<KList<T>>(
        'GET',
        path,
        {
          ...selectors,
          limit: opts.limit === undefined ? undefined : String(opts.limit),
          continue: opts.continue,
          resourceVersion: opts.resourceVersion,
        },
        signal,
      ),
    async watch(opts, cb) {
      const started = client.now();
      const query = {
        ...selectors,
        watch: 'true',
        resourceVersion: opts.resourceVersion,
        allowWatchBookmarks: String(opts.allowWatchBookmarks),
        timeoutSeconds: String(opts.timeoutSeconds),
      };
      const reader = new JsonLinesReader({ onValue: (ev) => cb.onEvent(ev as WatchEvent<T>), onEnd: (err) => cb.onDone(err) });
      let res;
      try {
        res = await client.stream(path, query, reader);
      } catch (err) {
        // No reply: the connection failed, or credentials could not be had (exec plugin).
        client.record('WATCH', '<error>', started);
        cb.onDone(err);
        return { stop: () => {} };
      }
      client.record('WATCH', res.statusCode, started);
      if (res.statusCode < 200 || res.statusCode > 299) {
        // A Status body: 410 Expired makes the informer relist, anything else reconnects.
        cb.onDone(statusError(res));
        return { stop: () => {} };
      }
      reader.attach(res.stop);
      return { stop: () => reader.stop() };
    },
  };
}
