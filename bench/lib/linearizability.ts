/**
 * A linearizability checker for one compare-and-swap register, after Wing & Gong's search with
 * Lowe's memoization (the algorithm of Knossos and porcupine): find an order of the operations
 * that respects real time (an operation that returned before another was invoked comes first) and
 * the register's sequential rules, or prove there is none.
 *
 * Operations are a read (saw `value`), or a compare-and-swap from `from` to `to` that succeeded
 * (`ok`), failed because the register did not hold `from` (`fail`), or whose outcome is unknown
 * (`info`: a timeout, a lost connection). An `info` operation may have taken effect at any moment
 * after its invocation, or never. An operation known not to have run at all (refused before it was
 * sent) is left out of the history by the caller. Values must be unique per write.
 */

export type RegisterOp =
  | { kind: 'read'; value: string }
  | { kind: 'cas'; from: string; to: string; outcome: 'ok' | 'fail' | 'info' };

export interface TimedOp {
  op: RegisterOp;
  /** When it was invoked and when its answer came (any monotonic clock; `Infinity` for `info`). */
  invoke: number;
  complete: number;
}

export interface CheckResult {
  linearizable: boolean;
  /** Operations in the order found (when linearizable). */
  order?: TimedOp[];
  /** Operations checked (info operations nobody could have observed are dropped first). */
  checked: number;
}

interface Entry {
  call: boolean;
  time: number;
  id: number;
  op: TimedOp;
  match?: Entry;
  prev?: Entry;
  next?: Entry;
}

/** The register after `op` from `state`, or undefined when `op` cannot happen there. */
function step(state: string, op: RegisterOp): string | undefined {
  if (op.kind === 'read') return op.value === state ? state : undefined;
  if (op.outcome === 'fail') return op.from === state ? undefined : state;
  if (op.outcome === 'ok') return op.from === state ? op.to : undefined;
  // info: taken effect now (when it can) — "never" is covered by leaving it unlinearized.
  return op.from === state ? op.to : undefined;
}

/**
 * Checks `history` starting from `initial`. An `info` write whose value nobody read or swapped from
 * cannot change what anybody observed except by making the register hold a value no later
 * operation accepts, so it is dropped: this keeps operations that never return from multiplying
 * the search.
 */
export function checkCasRegister(initial: string, history: TimedOp[]): CheckResult {
  const observed = new Set<string>();
  for (const { op } of history) {
    if (op.kind === 'read') observed.add(op.value);
    else observed.add(op.from);
  }
  const ops = history
    .filter(({ op }) => !(op.kind === 'cas' && op.outcome === 'info' && !observed.has(op.to)))
    .map((t) => (t.op.kind === 'cas' && t.op.outcome === 'info' ? { ...t, complete: Infinity } : t));

  // One doubly linked list of call and return entries in time order (calls first on a tie).
  const entries: Entry[] = [];
  ops.forEach((op, id) => {
    const call: Entry = { call: true, time: op.invoke, id, op };
    const ret: Entry = { call: false, time: op.complete, id, op };
    call.match = ret;
    entries.push(call, ret);
  });
  entries.sort((a, b) => a.time - b.time || Number(b.call) - Number(a.call));
  const head: Entry = { call: false, time: -Infinity, id: -1, op: undefined as unknown as TimedOp };
  let prev = head;
  for (const e of entries) {
    prev.next = e;
    e.prev = prev;
    prev = e;
  }

  const lift = (e: Entry): void => {
    e.prev!.next = e.next;
    if (e.next) e.next.prev = e.prev;
    const r = e.match!;
    r.prev!.next = r.next;
    if (r.next) r.next.prev = r.prev;
  };
  const unlift = (e: Entry): void => {
    const r = e.match!;
    r.prev!.next = r;
    if (r.next) r.next.prev = r;
    e.prev!.next = e;
    if (e.next) e.next.prev = e;
  };

  let state = initial;
  let linearized = 0n;
  const seen = new Set<string>();
  const stack: { entry: Entry; state: string }[] = [];
  let entry = head.next;
  // Done once only unreturned (info) operations are left: each may never have happened.
  while (entry && entry.time !== Infinity) {
    if (entry.call) {
      const next = step(state, entry.op.op);
      const bits = linearized | (1n << BigInt(entry.id));
      const key = next === undefined ? '' : `${bits.toString(16)}|${next}`;
      if (next !== undefined && !seen.has(key)) {
        seen.add(key);
        stack.push({ entry, state });
        state = next;
        linearized = bits;
        lift(entry);
        entry = head.next;
      } else {
        entry = entry.next;
      }
    } else {
      // An operation returned before any order could place it: undo the last choice.
      const top = stack.pop();
      if (!top) return { linearizable: false, checked: ops.length };
      state = top.state;
      linearized &= ~(1n << BigInt(top.entry.id));
      unlift(top.entry);
      entry = top.entry.next;
    }
  }
  return { linearizable: true, order: stack.map((s) => s.entry.op), checked: ops.length };
}
