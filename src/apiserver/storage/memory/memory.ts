/**
 * A Store that lives only in process memory: for tests and for running without a data directory.
 * Returned objects are deep-frozen (see frozen.ts); callers clone before changing them. There is
 * nothing to persist, so a write is applied and visible at once.
 */
import { DEFAULT_HISTORY_LIMIT, IndexedStore } from '../indexed-store.js';

export interface MemoryStoreOptions {
  /** Write events kept for watch resumption and range-at-revision (default 10000). */
  historyLimit?: number;
}

export class MemoryStore extends IndexedStore {
  constructor(options: MemoryStoreOptions = {}) {
    super(options.historyLimit ?? DEFAULT_HISTORY_LIMIT);
  }
}
