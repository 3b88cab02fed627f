/**
 * The two calls an informer needs, as a small interface so tests can script them and the real
 * implementation can sit on client-node: paginated LIST through KubeClient (measured), and WATCH through
 * client-node's Watch with bookmarks and a server-side timeout.
 */
import { Watch } from '@kubernetes/client-node';
import type { KList, KObject, WatchEvent } from '../../api/meta.js';
import type { KubeClient } from '../client/kube-client.js';
import { httpStatusOf } from '../errors.js';

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
  /** Called once when the stream ends: without an error for a clean close. */
  onDone(err?: unknown): void;
}

export interface WatchHandle {
  /** Ends the stream; `onDone` may or may not follow, callers must not depend on it. */
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

/** The production ListWatch: KubeClient for LIST, client-node Watch for WATCH. */
export function clientListWatch<T extends KObject = KObject>(client: KubeClient, ref: ResourceRef): ListWatch<T> {
  const path = collectionPath(ref);
  const selectors = { labelSelector: ref.labelSelector, fieldSelector: ref.fieldSelector };
  const watcher = new Watch(client.kubeConfig);
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
      let opened = false;
      let earlyError: unknown;
      const done = (err: unknown): void => {
        if (!opened) earlyError = err;
        cb.onDone(err ?? undefined);
      };
      try {
        const controller = await watcher.watch(
          path,
          { ...selectors, ...opts },
          (type: string, object: T) => cb.onEvent({ type: type as WatchEvent['type'], object }),
          done,
        );
        opened = true;
        client.record('WATCH', earlyError ? (httpStatusOf(earlyError) ?? '<error>') : 200, started);
        return { stop: () => controller.abort() };
      } catch (err) {
        // Raised before the request was sent (no cluster, credentials plugin failed).
        client.record('WATCH', '<error>', started);
        cb.onDone(err);
        return { stop: () => {} };
      }
    },
  };
}
