import { cloneObject, deepEqual, equalExcept, isEmptyJson, semanticEqual, type JsonPath } from './json-value.js';

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

describe('semanticEqual', () => {
  const none = (): boolean => false;

  it('takes absent, null, [] and {} for one another at any depth, and nothing else without being told', () => {
    for (const empty of [undefined, null, [], {}]) expect(isEmptyJson(empty)).toBe(true);
    expect(semanticEqual({ a: null, b: [], c: {} }, {}, none)).toBe(true);
    expect(semanticEqual({ c: { d: {} } }, { c: {} }, none)).toBe(true);
    // An object with fields is no absent value: a Go pointer to a struct of zeros is not nil.
    expect(semanticEqual({ c: { d: {} } }, {}, none)).toBe(false);
    expect(semanticEqual({ l: [{ x: [] }] }, { l: [{}] }, none)).toBe(true);
    for (const zero of ['', 0, false]) expect(semanticEqual({ a: zero }, {}, none)).toBe(false);
    expect(semanticEqual({ a: [1, 2] }, { a: [2, 1] }, none)).toBe(false);
    expect(semanticEqual({ a: { b: 1 } }, { a: { b: '1' } }, none)).toBe(false);
    expect(semanticEqual([{}], [], none)).toBe(false);
  });

  it("takes a value the caller calls zero at its path for absent, and only there", () => {
    const seen: string[] = [];
    const zeroFlag = (v: unknown, path: JsonPath): boolean => {
      seen.push(path.join('.'));
      return path.join('.') === 'spec.items.1.flag' && v === false;
    };
    expect(semanticEqual({ spec: { items: [{}, { flag: false }] } }, { spec: { items: [{}, {}] } }, zeroFlag)).toBe(true);
    expect(seen).toContain('spec.items.1.flag');
    expect(semanticEqual({ spec: { items: [{ flag: false }, {}] } }, { spec: { items: [{}, {}] } }, zeroFlag)).toBe(false);
    expect(semanticEqual({ spec: { items: [{}, { flag: true }] } }, { spec: { items: [{}, {}] } }, zeroFlag)).toBe(false);
  });
});

describe('deepEqual and equalExcept', () => {
  it('compares JSON values deeply, a field set to undefined as an absent one', () => {
    expect(deepEqual({ a: [1, { b: 'x' }], c: null }, { c: null, a: [1, { b: 'x' }] })).toBe(true);
    expect(deepEqual({ a: 1, u: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, u: undefined })).toBe(true);
    expect(deepEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(deepEqual({ a: [] }, { a: {} })).toBe(false);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(deepEqual({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(deepEqual({ a: null }, {})).toBe(false);
    expect(deepEqual({ a: '1' }, { a: 1 })).toBe(false);
  });

  it('leaves out the named fields at the top level only', () => {
    const skip = new Set(['resourceVersion']);
    expect(equalExcept({ name: 'x', resourceVersion: '1' }, { name: 'x', resourceVersion: '2' }, skip)).toBe(true);
    expect(equalExcept({ name: 'x', resourceVersion: '1' }, { name: 'x' }, skip)).toBe(true);
    expect(equalExcept({ name: 'x' }, { name: 'y', resourceVersion: '1' }, skip)).toBe(false);
    expect(equalExcept({ n: { resourceVersion: '1' } }, { n: { resourceVersion: '2' } }, skip)).toBe(false);
  });
});
