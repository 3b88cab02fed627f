import { deepFreeze, freezePlainJson } from './json.js';

describe('freezePlainJson', () => {
  it('freezes plain JSON in place, all the way down, and says it is plain', () => {
    const value = { a: 'x', b: [1, 2.5, { c: null, d: true }], e: {}, f: [], '0': -1, __proto__key: 'k' };
    expect(freezePlainJson(value)).toBe(true);
    for (const part of [value, value.b, value.b[2], value.e, value.f]) expect(Object.isFrozen(part)).toBe(true);
    expect(JSON.parse(JSON.stringify(value))).toStrictEqual(value);
  });

  it('keeps an own "__proto__" key of parsed JSON as data', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"y":[2]}') as Record<string, unknown>;
    expect(freezePlainJson(value)).toBe(true);
    expect(JSON.parse(JSON.stringify(value))).toStrictEqual(value);
  });

  it('says no to anything JSON would change on the way through', () => {
    const notPlain: unknown[] = [
      { a: undefined },
      [1, undefined],
      // eslint-disable-next-line no-sparse-arrays
      [1, , 3],
      { n: Number.NaN },
      { n: Number.POSITIVE_INFINITY },
      { n: -0 },
      { d: new Date(0) },
      { f: () => 1 },
      { m: new Map() },
      { b: 1n },
      Object.create(null) as object,
      { deep: { deeper: [{ x: undefined }] } },
    ];
    for (const value of notPlain) expect(freezePlainJson(value)).toBe(false);
  });

  it('accepts scalars and null as they are', () => {
    for (const value of ['s', true, false, 0, 1.5, null]) expect(freezePlainJson(value)).toBe(true);
    expect(freezePlainJson(undefined)).toBe(false);
  });
});

describe('deepFreeze', () => {
  it('freezes every object and array reachable from a value, and returns it', () => {
    const value = { a: [1, { b: 'x', c: [{ d: null }] }], e: { f: { g: true } }, h: 'text' };
    expect(deepFreeze(value)).toBe(value);
    const objects = [value, value.a, value.a[1], (value.a[1] as { c: object[] }).c, (value.a[1] as { c: object[] }).c[0], value.e, value.e.f];
    for (const o of objects) expect(Object.isFrozen(o)).toBe(true);
    expect(deepFreeze('text')).toBe('text');
    expect(deepFreeze(null)).toBeNull();
  });

  it('does not walk into a value already frozen, and freezes arrays within arrays', () => {
    const inner = { x: 1 };
    const list = Object.freeze([inner]);
    deepFreeze({ list });
    // A frozen container is taken as frozen through and through (as before): its children are not visited.
    expect(Object.isFrozen(inner)).toBe(false);
    const arr = [{ y: 2 }, [{ z: 3 }]];
    deepFreeze(arr);
    expect(Object.isFrozen(arr[0])).toBe(true);
    expect(Object.isFrozen((arr[1] as object[])[0])).toBe(true);
  });
});
