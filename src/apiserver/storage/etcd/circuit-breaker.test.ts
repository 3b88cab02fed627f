import { BrokenCircuitError, isBrokenCircuitError } from 'cockatiel';
import { CircuitBreaker } from './circuit-breaker.js';

class Down extends Error {}
class Refused extends Error {}

/** A breaker counting `Down` as a failure, on a clock the test moves. */
function breaker(): { b: CircuitBreaker; clock: { t: number } } {
  const clock = { t: 1_000 };
  return { b: new CircuitBreaker((err) => err instanceof Down, 3, 5000, () => clock.t), clock };
}

const fail = (err: Error) => () => Promise.reject(err);
const ok = <T>(value: T) => () => Promise.resolve(value);

async function failures(b: CircuitBreaker, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await expect(b.run(fail(new Down('down')))).rejects.toBeInstanceOf(Down);
}

describe('CircuitBreaker', () => {
  it('opens after three failures in a row and refuses with BrokenCircuitError until the half-open time', async () => {
    const { b, clock } = breaker();
    await failures(b, 3);
    let ran = false;
    const refused = await b.run(() => ((ran = true), Promise.resolve(1))).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BrokenCircuitError);
    expect(isBrokenCircuitError(refused)).toBe(true);
    expect(ran).toBe(false);
    clock.t += 4_999;
    await expect(b.run(ok(1))).rejects.toBeInstanceOf(BrokenCircuitError);
    clock.t += 1;
    await expect(b.run(ok(2))).resolves.toBe(2);
    // Closed again: a fresh count of three.
    await failures(b, 2);
    await expect(b.run(ok(3))).resolves.toBe(3);
  });

  it('counts only failures in a row: a success resets the count, other errors leave it', async () => {
    const { b } = breaker();
    await failures(b, 2);
    await expect(b.run(ok('x'))).resolves.toBe('x');
    await failures(b, 2);
    await expect(b.run(fail(new Refused('no')))).rejects.toBeInstanceOf(Refused);
    await expect(b.run(ok('still closed'))).resolves.toBe('still closed');
    await failures(b, 2);
    await expect(b.run(fail(new Refused('no')))).rejects.toBeInstanceOf(Refused);
    await failures(b, 1);
    await expect(b.run(ok(1))).rejects.toBeInstanceOf(BrokenCircuitError);
  });

  it('a function that throws at once counts as its rejection', async () => {
    const { b } = breaker();
    for (let i = 0; i < 3; i++) {
      await expect(
        b.run(() => {
          throw new Down('sync');
        }),
      ).rejects.toBeInstanceOf(Down);
    }
    await expect(b.run(ok(1))).rejects.toBeInstanceOf(BrokenCircuitError);
  });

  it('half-open: one trial runs, the calls meanwhile wait for it; a failed trial opens it again for the full time', async () => {
    const { b, clock } = breaker();
    await failures(b, 3);
    clock.t += 5_000;
    let reject!: (err: Error) => void;
    const runs: string[] = [];
    const trial = b.run(() => (runs.push('trial'), new Promise<never>((_, r) => (reject = r))));
    const waiting = b.run(() => (runs.push('waiting'), Promise.resolve('late')));
    await Promise.resolve();
    expect(runs).toEqual(['trial']);
    reject(new Down('still down'));
    await expect(trial).rejects.toBeInstanceOf(Down);
    // The waiting call found the breaker open again, and never ran.
    await expect(waiting).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(runs).toEqual(['trial']);
    clock.t += 4_999;
    await expect(b.run(ok(1))).rejects.toBeInstanceOf(BrokenCircuitError);
  });

  it('half-open: a successful trial (or an error that is no failure) closes it, and the waiting calls then run', async () => {
    for (const outcome of [ok('fine'), fail(new Refused('bad request'))]) {
      const { b, clock } = breaker();
      await failures(b, 3);
      clock.t += 5_000;
      const trial = b.run(outcome).catch((e: unknown) => e);
      const waiting = b.run(ok('after'));
      await trial;
      await expect(waiting).resolves.toBe('after');
      await failures(b, 2);
      await expect(b.run(ok('closed'))).resolves.toBe('closed');
    }
  });

  it('a failure of a call started before the breaker opened does not hold it open longer', async () => {
    const { b, clock } = breaker();
    let reject!: (err: Error) => void;
    const slow = b.run(() => new Promise<never>((_, r) => (reject = r)));
    await failures(b, 3);
    clock.t += 3_000;
    reject(new Down('late'));
    await expect(slow).rejects.toBeInstanceOf(Down);
    clock.t += 2_000;
    await expect(b.run(ok('trial'))).resolves.toBe('trial');
  });
});
