/**
 * One priority level of flow control: a number of seats (requests executing at once) and, when they
 * are all taken, fair queuing as APF does it. A flow is dealt a hand of queues by hashing (shuffle
 * sharding) and joins the shortest of its hand, so one flow's burst fills few queues; seats go to the
 * queues in turn, so a flow with one request waits behind at most one request of each busy flow.
 * A request is rejected when its queue is full, when it waited longer than its wait limit, or
 * (`concurrency-limit`) when the level does not queue at all.
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
}

/** A request waiting for a seat: `admitted` says how its wait ended (undefined: it holds a seat). */
export interface Ticket {
  admitted: Promise<Rejection | undefined>;
  /** The client went away while the request waited. */
  cancel(): void;
}

/** FNV-1a, 32 bits: the flow's hand is fixed by its name alone. */
function hash(text: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class PriorityLevel {
  executing = 0;
  waiting = 0;
  private readonly queues: Waiter[][];
  private turn = 0;

  constructor(
    readonly seats: number,
    private readonly queuing: QueuingConfig,
  ) {
    this.queues = Array.from({ length: queuing.queues }, () => []);
  }

  /** Takes a seat at once when one is free and nobody waits; false otherwise. */
  tryAcquire(): boolean {
    if (this.executing >= this.seats || this.waiting > 0) return false;
    this.executing++;
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
    return { admitted, cancel: () => this.remove(waiter, 'cancelled') };
  }

  /** Frees a seat and hands it to the next queue in turn. */
  release(): void {
    this.executing--;
    this.dispatch();
  }

  private dispatch(): void {
    while (this.waiting > 0 && this.executing < this.seats) {
      const waiter = this.nextInTurn();
      if (!waiter) return;
      clearTimeout(waiter.timer);
      this.waiting--;
      this.executing++;
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
