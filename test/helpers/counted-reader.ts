/** Helpers for the tests of the watch-fed caches of access control (the RBAC index, the node graph). */
import type { ObjectReader } from '../../src/apiserver/authentication/types.js';
import { objectReader } from '../../src/apiserver/registry/registries.js';
import type { Store } from '../../src/apiserver/storage/store.js';

/** The store's objects as access control reads them, with every read counted. */
export function countedReader(store: Store): { reader: ObjectReader; reads: () => number } {
  const inner = objectReader(store);
  let reads = 0;
  const reader: ObjectReader = {
    get: (...args) => (reads++, inner.get(...args)),
    list: (...args) => (reads++, inner.list(...args)),
  };
  return { reader, reads: () => reads };
}

/** Resolves once `cache` has listed what it watches. */
export async function untilReady(cache: { ready(): boolean }): Promise<void> {
  while (!cache.ready()) await new Promise((r) => setTimeout(r, 1));
}
