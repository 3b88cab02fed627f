/**
 * `addAfter` on top of the work queue: every delayed key sits in ONE min-heap and one clock timer is
 * armed for the earliest. A key delayed again keeps its earliest ready time (client-go semantics).
 */
import { WorkQueue, type QueueOptions } from './queue.js';
import type { TimerHandle } from '../../lib/clock.js';

interface Entry {
  at: number;
  seq: number;
  key: string;
}

export class DelayingQueue extends WorkQueue {
  private heap: Entry[] = [];
  private readonly readyAt = new Map<string, number>();
  private seq = 0;
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;

  constructor(opts: QueueOptions) {
    super(opts);
  }

  addAfter(key: string, ms: number): void {
    if (this.isShuttingDown()) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + ms;
    const existing = this.readyAt.get(key);
    if (existing !== undefined && existing <= at) return;
    this.readyAt.set(key, at);
    this.pushEntry({ at, seq: this.seq++, key });
    this.arm();
  }

  /** Keys waiting for their delay (for tests and diagnostics). */
  waitingCount(): number {
    return this.readyAt.size;
  }

  protected override onShutDown(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.heap = [];
    this.readyAt.clear();
  }

  private arm(): void {
    const first = this.heap[0];
    if (!first || first.at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = first.at;
    this.timer = this.clock.setTimeout(() => this.fire(), first.at - this.clock.now());
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    for (let top = this.heap[0]; top && top.at <= now; top = this.heap[0]) {
      this.popEntry();
      // Stale entries (superseded by an earlier ready time) are skipped.
      if (this.readyAt.get(top.key) !== top.at) continue;
      this.readyAt.delete(top.key);
      this.add(top.key);
    }
    this.arm();
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private pushEntry(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i] as Entry, h[p] as Entry)) break;
      [h[i], h[p]] = [h[p] as Entry, h[i] as Entry];
      i = p;
    }
  }

  private popEntry(): void {
    const h = this.heap;
    const last = h.pop();
    if (!last || h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l] as Entry, h[m] as Entry)) m = l;
      if (r < h.length && this.less(h[r] as Entry, h[m] as Entry)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m] as Entry, h[i] as Entry];
      i = m;
    }
  }
}
