/**
 * Helpers over an injected prom-client Registry. Metrics are shared per registry (one
 * `workqueue_depth` with a `name` label for every queue), so components look them up here
 * instead of registering twice.
 */
import { collectDefaultMetrics, type Registry } from 'prom-client';

const perRegistry = new WeakMap<Registry, Map<string, unknown>>();

/** Returns the value `create` built for this registry and key the first time, creating it once. */
export function once<T>(registry: Registry, key: string, create: () => T): T {
  let cache = perRegistry.get(registry);
  if (!cache) {
    cache = new Map();
    perRegistry.set(registry, cache);
  }
  if (!cache.has(key)) cache.set(key, create());
  return cache.get(key) as T;
}

/** Process metrics (CPU, memory, event loop lag, GC), registered into the injected registry once. */
export function registerProcessMetrics(registry: Registry): void {
  once(registry, 'process', () => collectDefaultMetrics({ register: registry }));
}
