import { cloneObject } from './json-value.js';

describe('cloneObject', () => {
  it('copies a frozen JSON object deeply into a mutable one', () => {
    const src = Object.freeze({ a: Object.freeze([1, Object.freeze({ b: 'x' })]), c: null, d: Object.freeze({ e: true }) });
    const out = cloneObject(src);
    expect(out).toEqual(src);
    expect(Object.isFrozen(out) || Object.isFrozen(out.a) || Object.isFrozen(out.a[1]) || Object.isFrozen(out.d)).toBe(false);
    (out.a[1] as { b: string }).b = 'y';
    expect((src.a[1] as { b: string }).b).toBe('x');
  });

  it('keeps an own "__proto__" key as data', () => {
    const src = JSON.parse('{"__proto__": {"polluted": 1}, "k": 2}') as Record<string, unknown>;
    const out = cloneObject(src);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'k']);
    expect((out as { polluted?: number }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: 1 });
  });

  it('copies non-JSON values such as a Date rather than sharing them', () => {
    const when = new Date(0);
    const out = cloneObject({ when });
    expect(out.when).toEqual(when);
    expect(out.when).not.toBe(when);
  });
});
