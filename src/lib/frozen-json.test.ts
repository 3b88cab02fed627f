import { jest } from '@jest/globals';
import { compactJson, rememberJson } from './frozen-json.js';
import { deepFreeze } from './json.js';

describe('compactJson', () => {
  it('is JSON.stringify for any value', () => {
    for (const v of [null, 1, 'a"b', [1, { a: 2 }], { a: { b: [true, null] } }, deepFreeze({ k: 'v', n: [1, 2] })]) {
      expect(compactJson(v)).toBe(JSON.stringify(v));
    }
  });

  it('reuses the text of a frozen object', () => {
    const stored = deepFreeze({ metadata: { name: 'a' }, spec: { x: 1 } });
    const first = compactJson(stored);
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(compactJson(stored)).toBe(first);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });

  it('uses the text it was given for an object, without stringifying it', () => {
    const text = '{"metadata":{"name":"b"},"data":{"k":"v"}}';
    const stored = deepFreeze(JSON.parse(text) as object);
    rememberJson(stored, text);
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(compactJson(stored)).toBe(text);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });

  it('keeps a text remembered before freezing on the object alone: no copy of it carries the text', () => {
    const stored: Record<string, unknown> = { metadata: { name: 'c' }, n: 1 };
    rememberJson(stored, '{"metadata":{"name":"c"},"n":1}');
    deepFreeze(stored);
    const copy = deepFreeze({ ...stored, n: 2 });
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(compactJson(stored)).toBe('{"metadata":{"name":"c"},"n":1}');
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
    expect(compactJson(copy)).toBe('{"metadata":{"name":"c"},"n":2}');
    expect(compactJson(deepFreeze(Object.assign({}, stored)))).toBe(JSON.stringify(stored));
    expect(Object.keys(stored)).toEqual(['metadata', 'n']);
    expect(structuredClone(stored)).toStrictEqual({ metadata: { name: 'c' }, n: 1 });
    expect(stored).toStrictEqual({ metadata: { name: 'c' }, n: 1 });
  });

  it('encodes objects that can change afresh every time', () => {
    const draft: Record<string, unknown> = { a: 1 };
    expect(compactJson(draft)).toBe('{"a":1}');
    draft.a = 2;
    expect(compactJson(draft)).toBe('{"a":2}');
  });

  it('keeps the text of every live frozen object, not only the most recent ones', () => {
    const objects = Array.from({ length: 3000 }, (_, i) => deepFreeze({ i }));
    for (const o of objects) compactJson(o);
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(objects.map((o) => compactJson(o))).toEqual(objects.map((_, i) => `{"i":${i}}`));
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });
});
