/**
 * A MemoryStore whose watches a test can end with an error, as a compaction or a lost etcd stream
 * would, and whose next ranges it can fail; it counts the ranges it is asked for. For the tests of
 * the watch-fed caches (the store reflector and its users).
 */
import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import { StoreError, type RangeOptions, type RangeResult, type WatchHandle, type WatchOptions } from '../../src/apiserver/storage/store.js';

export class BreakableStore extends MemoryStore {
  /** Ranges asked for so far. */
  ranges = 0;
  /** How many of the next ranges fail (Unavailable). */
  failRanges = 0;
  private readonly live: { options: WatchOptions; handle: WatchHandle }[] = [];

  override range(options: RangeOptions): Promise<RangeResult> {
    this.ranges++;
    if (this.failRanges > 0) {
      this.failRanges--;
      return Promise.reject(new StoreError('Unavailable', options.prefix ?? '', 'failed by the test'));
    }
    return super.range(options);
  }

  override watch(prefix: string, options: WatchOptions): WatchHandle {
    const handle = super.watch(prefix, options);
    this.live.push({ options, handle });
    return handle;
  }

  /** Stops every watch and reports `code` to it, as a store does when it cannot go on. */
  breakWatches(code: 'Compacted' | 'Unavailable'): void {
    for (const { options, handle } of this.live.splice(0)) {
      handle.stop();
      options.onError?.(new StoreError(code, '', 'broken by the test'));
    }
  }
}
