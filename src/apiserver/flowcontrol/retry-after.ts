/**
 * The `Retry-After` a shed request is told, per priority level, as kube-apiserver's priority and
 * fairness filter computes it (its dropped-requests tracker, since 1.29): 1 s while a level sheds
 * little; doubled, up to 32 s, when the level shed at least three times the current value within the
 * last value's seconds (and no sooner than that many seconds after the last doubling, so one spike
 * doubles it once); lowered by one second when it shed fewer than the value. It is re-evaluated on
 * the first shed request of each new second, from the seconds before it, like TCP's congestion
 * window: a storm is spread out instead of coming back whole a second later. A fixed `Retry-After: 1`
 * kept a saturated loop saturated in the fleet's rotation wave, every shed kubelet sending again in
 * the same second (docs/flow-control.md).
 */

/** Upstream's ceiling. */
export const MAX_RETRY_AFTER_SECONDS = 32;

/** Requests shed in one second of the clock. */
interface Second {
  at: number;
  shed: number;
}

class LevelRetryAfter {
  value = 1;
  /** Seconds before the current one that shed anything, oldest first (kept for at most 2 × value). */
  private history: Second[] = [];
  private current: Second = { at: 0, shed: 0 };
  private doubledAt = 0;

  /** Counts one shed request at `second` (whole seconds of the clock). */
  shed(second: number): void {
    if (second === this.current.at) {
      this.current.shed++;
      return;
    }
    this.history.push(this.current);
    const keep = Math.min(2 * this.value, MAX_RETRY_AFTER_SECONDS);
    const first = this.history.findIndex((s) => second - s.at <= keep);
    this.history = first < 0 ? [] : this.history.slice(first);
    this.current = { at: second, shed: 1 };
    this.adjust(second);
  }

  /** From what the `value` seconds before `second` shed. */
  private adjust(second: number): void {
    let shed = 0;
    for (const s of this.history) if (second - s.at <= this.value && s.at < second) shed += s.shed;
    if (second - this.doubledAt >= this.value && shed >= 3 * this.value) {
      this.value = Math.min(2 * this.value, MAX_RETRY_AFTER_SECONDS);
      this.doubledAt = second;
    } else if (shed < this.value && this.value > 1) {
      this.value--;
    }
  }
}

/** The Retry-After of each priority level, from the requests it shed. */
export class RetryAfter {
  private readonly levels = new Map<string, LevelRetryAfter>();

  /** `now`: the wall clock in ms (tests step their own). */
  constructor(private readonly now: () => number = Date.now) {}

  /** Counts a request `level` shed and returns the seconds it is told to wait. */
  shed(level: string): number {
    let l = this.levels.get(level);
    if (!l) this.levels.set(level, (l = new LevelRetryAfter()));
    l.shed(Math.floor(this.now() / 1000));
    return l.value;
  }
}
