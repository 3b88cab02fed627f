/**
 * One piece of work shared by every caller that asks for it within one turn of the event loop, and
 * started only after all of them asked (on the next turn). For reads that must see every write
 * acknowledged before a caller's request arrived, yet need not be repeated per request: a caller
 * always joins a batch that has not started, never one already under way, so what it reads is at
 * least as new as its request, while a flood of requests in one turn costs one read.
 */
export class TurnBatch<T> {
  /** The batch that has not started yet, which a caller arriving now joins. */
  private next: Promise<T> | undefined;

  constructor(private readonly start: () => T | PromiseLike<T>) {}

  /** The result of a `start()` that begins after this call, shared with the callers of this turn. */
  join(): Promise<T> {
    this.next ??= new Promise((resolve) => setImmediate(resolve)).then(() => {
      // Work starts now: a caller arriving from here on waits for the next batch.
      this.next = undefined;
      return this.start();
    });
    return this.next;
  }
}

/**
 * TurnBatch per key: callers asking for the same key within one turn share one `start(key)`, begun
 * after all of them asked; a key's batch is forgotten once it starts, so keys seen once leave nothing behind.
 */
export class KeyedTurnBatch<T> {
  private readonly next = new Map<string, TurnBatch<T>>();

  constructor(private readonly start: (key: string) => T | PromiseLike<T>) {}

  join(key: string): Promise<T> {
    let batch = this.next.get(key);
    if (!batch) {
      batch = new TurnBatch(() => {
        this.next.delete(key);
        return this.start(key);
      });
      this.next.set(key, batch);
    }
    return batch.join();
  }
}
