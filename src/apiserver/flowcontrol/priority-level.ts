/**
 * One priority level of flow control: a number of seats (requests executing at once) and, when they
 * are all taken, fair queuing as APF does it. A flow is dealt a hand of queues by hashing (shuffle
 * sharding) and joins the shortest of its hand, so one flow's burst fills few queues; seats go to the
 * queues in turn, so a flow with one request waits behind at most one request of each busy flow.
 * A request is rejected when its queue is full, when it waited longer than its wait limit, or
 * (`concurrency-limit`) when the level does not queue at all.
 *
 * Seats are lent between levels, as APF's borrowing (KEP-1040) lends them: a level may lend up to its
 * lendable seats while it does not use them and none of its own requests waits, and a level whose
 * own seats are all taken runs its next request on a lent seat when one is free (`LendingPool`). A
 * level thus always keeps its nominal seats less its lendable ones, and the levels together never
 * hold more seats than the server has. Upstream readjusts each level's limit every few seconds from
 * its demand; here a seat is lent the moment it is idle, which matters on one event loop: a request
 * holds its seat through every loop turn it waits for, so when the loop is late a level's seats run
 * out long before the loop's time does (kubelets' Lease renewals waited out node-high's queue while
 * the workload level, shed at once, sat on idle seats: docs/flow-control.md).
 */

export type Rejection = 'queue-full' | 'time-out' | 'cancelled' | 'concurrency-limit';

export interface QueuingConfig {
  /** Queues of the level; 0 rejects at once when every seat is taken. */
  queues: number;
  /** Requests one queue holds. */
  queueLengthLimit: number;
  /** Queues a flow is dealt; it joins the shortest. */
  handSize: number;
}

interface Waiter {
  queue: Waiter[];
  settle(rejection: Rejection | undefined): void;
  timer: NodeJS.Timeout;
  /** The level whose seat it was admitted on, when that is not its own. */
  lender?: PriorityLevel;
}

/** A request waiting for a seat: `admitted` says how its wait ended (undefined: it holds a seat). */
export interface Ticket {
  admitted: Promise<Rejection | undefined>;
  /** The client went away while the request waited. */
  cancel(): void;
  /** Once admitted: the level that lent it its seat, or undefined for a seat of its own level. */
  readonly lender: PriorityLevel | undefined;
}

/** The levels that lend each other seats: where a level without a free seat finds one. */
export class LendingPool {
  private readonly levels: PriorityLevel[] = [];

  join(level: PriorityLevel): void {
    this.levels.push(level);
  }

  /** A lender with an idle lendable seat for `borrower`, its seat counted as lent; undefined if none. */
  borrowFor(borrower: PriorityLevel): PriorityLevel | undefined {
    for (const lender of this.levels) {
      if (lender !== borrower && lender.lendOne()) return lender;
    }
    return undefined;
  }

  /** A seat came free somewhere: levels with requests waiting may borrow it. */
  freed(): void {
    for (const level of this.levels) if (level.waiting > 0) level.dispatch();
  }
}

/** FNV-1a, 32 bits: the flow's hand is fixed by its name alone. */
function hash(text: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class PriorityLevel {
  /** This level's own seats held by its requests. */
  executing = 0;
  waiting = 0;
  /** This level's seats other levels' requests hold. */
  lent = 0;
  private readonly queues: Waiter[][];
  private turn = 0;

  constructor(
    readonly seats: number,
    private readonly queuing: QueuingConfig,
    /** Seats it may lend while it does not use them (0 without a pool). */
    readonly lendable = 0,
    private readonly pool?: LendingPool,
  ) {
    this.queues = Array.from({ length: queuing.queues }, () => []);
    pool?.join(this);
  }

  /** Takes a seat of its own at once when one is free and nobody waits; false otherwise. */
  tryAcquire(): boolean {
    if (this.executing + this.lent >= this.seats || this.waiting > 0) return false;
    this.executing++;
    return true;
  }

  /** Takes a lent seat at once when nobody of this level waits and another level has one idle. */
  tryBorrow(): PriorityLevel | undefined {
    return this.waiting > 0 ? undefined : this.pool?.borrowFor(this);
  }

  /** Lends a seat if one of its lendable seats is idle and none of its own requests waits. */
  lendOne(): boolean {
    if (this.lent >= this.lendable || this.executing + this.lent >= this.seats || this.waiting > 0) return false;
    this.lent++;
    return true;
  }

  /** Queues a request of `flow` for the next free seat for at most `waitMs`, or rejects it at once. */
  enqueue(flow: string, waitMs: number): Ticket | Rejection {
    const queue = this.pickQueue(flow);
    if (!queue) return 'concurrency-limit';
    if (queue.length >= this.queuing.queueLengthLimit) return 'queue-full';
    let settle!: (r: Rejection | undefined) => void;
    const admitted = new Promise<Rejection | undefined>((resolve) => (settle = resolve));
    const waiter: Waiter = {
      queue,
      settle,
      timer: setTimeout(() => this.remove(waiter, 'time-out'), waitMs),
    };
    queue.push(waiter);
    this.waiting++;
    return {
      admitted,
      cancel: () => this.remove(waiter, 'cancelled'),
      get lender() {
        return waiter.lender;
      },
    };
  }

  /**
   * Frees the seat of one of this level's requests (a lender's, if it was lent one) and hands it to
   * the next queue in turn; a seat that goes back to a lender may go on to any level waiting.
   */
  release(lender?: PriorityLevel): void {
    if (lender) lender.lent--;
    else this.executing--;
    this.dispatch();
    if (lender || this.lendable > 0) this.pool?.freed();
  }

  /** Admits waiting requests while a seat is free: its own, or one lent by another level. */
  dispatch(): void {
    while (this.waiting > 0) {
      const own = this.executing + this.lent < this.seats;
      const lender = own ? undefined : this.pool?.borrowFor(this);
      if (!own && !lender) return;
      const waiter = this.nextInTurn();
      if (!waiter) {
        if (lender) lender.lent--;
        return;
      }
      clearTimeout(waiter.timer);
      this.waiting--;
      if (lender) waiter.lender = lender;
      else this.executing++;
      waiter.settle(undefined);
    }
  }

  /** The head of the next non-empty queue after the last one served. */
  private nextInTurn(): Waiter | undefined {
    const n = this.queues.length;
    for (let i = 0; i < n; i++) {
      const at = (this.turn + i) % n;
      const waiter = this.queues[at]?.shift();
      if (!waiter) continue;
      this.turn = (at + 1) % n;
      return waiter;
    }
    return undefined;
  }

  private remove(waiter: Waiter, why: Rejection): void {
    const at = waiter.queue.indexOf(waiter);
    if (at < 0) return;
    waiter.queue.splice(at, 1);
    clearTimeout(waiter.timer);
    this.waiting--;
    waiter.settle(why);
  }

  /**
   * The shortest queue of the flow's hand. The hand is dealt by double hashing: with a power-of-two
   * number of queues and an odd stride its cards are distinct.
   */
  private pickQueue(flow: string): Waiter[] | undefined {
    const n = this.queues.length;
    if (n === 0) return undefined;
    const start = hash(flow, 0x811c9dc5);
    const stride = hash(flow, 0x9e3779b9) | 1;
    let best: Waiter[] | undefined;
    for (let card = 0; card < Math.min(this.queuing.handSize, n); card++) {
      const queue = this.queues[(start + card * stride) % n];
      if (queue && (!best || queue.length < best.length)) best = queue;
    }
    return best;
  }
}
