/**
 * The soak's linearizability checker on histories whose answer is known: textbook linearizable and
 * non-linearizable compare-and-swap histories, unknown outcomes that must or must not have taken
 * effect, and a long generated history from a real sequential register with overlapping calls.
 */
import { checkCasRegister, type TimedOp } from '../../bench/lib/linearizability.js';

const read = (value: string, invoke: number, complete: number): TimedOp => ({ op: { kind: 'read', value }, invoke, complete });
const cas = (from: string, to: string, outcome: 'ok' | 'fail' | 'info', invoke: number, complete: number): TimedOp => ({
  op: { kind: 'cas', from, to, outcome },
  invoke,
  complete,
});
const check = (history: TimedOp[], initial = 'a'): boolean => checkCasRegister(initial, history).linearizable;

describe('checkCasRegister', () => {
  it('accepts sequential histories and rejects a stale read after an acknowledged write', () => {
    expect(check([cas('a', 'b', 'ok', 0, 1), read('b', 2, 3)])).toBe(true);
    expect(check([cas('a', 'b', 'ok', 0, 1), read('a', 2, 3)])).toBe(false);
    expect(check([])).toBe(true);
  });

  it('lets reads overlapping a write see either value, in an order consistent with real time', () => {
    expect(check([cas('a', 'b', 'ok', 0, 10), read('a', 1, 2), read('b', 3, 4)])).toBe(true);
    // Once one read saw the new value, a later read cannot see the old one.
    expect(check([cas('a', 'b', 'ok', 0, 10), read('b', 1, 2), read('a', 3, 4)])).toBe(false);
    // A read cannot see a value written by an operation invoked after it returned.
    expect(check([read('b', 0, 1), cas('a', 'b', 'ok', 2, 3)])).toBe(false);
  });

  it('rejects two successful swaps from the same value, and accepts one of them failing', () => {
    expect(check([cas('a', 'b', 'ok', 0, 5), cas('a', 'c', 'ok', 0, 5)])).toBe(false);
    expect(check([cas('a', 'b', 'ok', 0, 5), cas('a', 'c', 'fail', 0, 5), read('b', 6, 7)])).toBe(true);
  });

  it('rejects a failed swap when nothing else could have changed the register', () => {
    expect(check([cas('a', 'b', 'fail', 0, 1)])).toBe(false);
    expect(check([cas('x', 'b', 'fail', 0, 1), read('a', 2, 3)])).toBe(true);
    // With a concurrent write, the failure is explained.
    expect(check([cas('a', 'b', 'fail', 0, 3), cas('a', 'c', 'ok', 1, 2), read('c', 4, 5)])).toBe(true);
  });

  it('places an unknown outcome where an observation needs it, and never where it cannot be', () => {
    expect(check([cas('a', 'b', 'info', 0, Infinity), read('b', 5, 6)])).toBe(true);
    expect(check([cas('a', 'b', 'info', 0, Infinity), read('a', 5, 6)])).toBe(true);
    // It happened once or never: the register cannot go back to a.
    expect(check([cas('a', 'b', 'info', 0, Infinity), read('a', 1, 2), read('b', 3, 4), read('a', 5, 6)])).toBe(false);
    // Seen before it was invoked: impossible.
    expect(check([read('b', 0, 1), cas('a', 'b', 'info', 2, Infinity)])).toBe(false);
  });

  it('finds a "failure" that later appears: a write refused with a definite failure whose value is read', () => {
    // The soak leaves writes refused before sending out of the history; a 409 is a `fail`.
    expect(check([cas('a', 'b', 'fail', 0, 1), read('b', 2, 3)])).toBe(false);
  });

  it('accepts a long history of a real register with overlapping clients, and rejects it with one stale read added', () => {
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // Four clients, 500 operations each; each takes effect at a random instant inside its interval.
    const calls: { invoke: number; complete: number; at: number; read: boolean }[] = [];
    for (let client = 0; client < 4; client++) {
      let t = rand();
      for (let i = 0; i < 500; i++) {
        const complete = t + 0.5 + rand() * 3;
        calls.push({ invoke: t, complete, at: t + (complete - t) * rand(), read: rand() < 0.3 });
        t = complete + rand();
      }
    }
    let value = 'v0';
    const history = calls
      .sort((x, y) => x.at - y.at)
      .map(({ invoke, complete, read: isRead }, i): TimedOp => {
        if (isRead) return read(value, invoke, complete);
        // A stale expectation fails; the others swap, a few with an unknown outcome.
        if (rand() < 0.3) return cas(`gone-${i}`, `never-${i}`, 'fail', invoke, complete);
        const from = value;
        value = `v${i + 1}`;
        return rand() < 0.05 ? cas(from, value, 'info', invoke, Infinity) : cas(from, value, 'ok', invoke, complete);
      });
    expect(check(history, 'v0')).toBe(true);

    const end = Math.max(...history.map((h) => h.complete).filter(Number.isFinite));
    expect(check([...history, read('v0', end + 1, end + 2)], 'v0')).toBe(false);
  });
});
