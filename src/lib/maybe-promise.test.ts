import { isPromise, promised, then } from './maybe-promise.js';

describe('MaybePromise', () => {
  it('tells a promise (or any thenable) from a value', () => {
    expect(isPromise(Promise.resolve(1))).toBe(true);
    expect(isPromise({ then: () => undefined } as unknown as Promise<number>)).toBe(true);
    expect(isPromise(1)).toBe(false);
    expect(isPromise(undefined)).toBe(false);
    expect(isPromise<unknown>(null)).toBe(false);
    expect(isPromise({ allowed: true })).toBe(false);
  });

  it('applies a function at once to a value, and after the promise to a promise', async () => {
    expect(then(2, (v) => v * 3)).toBe(6);
    const later = then(Promise.resolve(2), (v) => v * 3);
    expect(isPromise(later)).toBe(true);
    expect(await later).toBe(6);
    expect(await then(2, (v) => Promise.resolve(v + 1))).toBe(3);
  });

  it('turns a synchronous throw into a rejection', async () => {
    const boom = new Error('boom');
    const p = promised(() => {
      throw boom;
    });
    await expect(p).rejects.toBe(boom);
    await expect(promised(() => 5)).resolves.toBe(5);
    await expect(promised(() => Promise.reject(boom))).rejects.toBe(boom);
  });
});
