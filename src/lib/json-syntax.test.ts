import { isJsonText } from './json-syntax.js';

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('isJsonText', () => {
  it.each([
    '{}', '[]', ' { } ', '0', '-0', '-12.5e+3', '1E9', '"a"', 'true', 'false', 'null', '"\\u00e9\\n\\"\\\\\\/"',
    '{"a":[1,{"b":null}],"c":"d"}', '[[[[]]]]', '{"metadata":{"name":"x","resourceVersion":"5"}}', '\t[1 ,\r\n2]\n',
  ])('accepts %j as JSON.parse does', (text) => {
    expect([parses(text), isJsonText(text)]).toEqual([true, true]);
  });

  it.each([
    '', ' ', '{', '}', '[1,]', '{"a":1,}', '{"a"}', '{"a":}', '{a:1}', "{'a':1}", '01', '1.', '.5', '-', '1e', '+1', 'tru', 'nul',
    'NaN', '"\\x"', '"\\u12g4"', '"a\nb"', '"a', '{"a":1}}', '{"a":1} x', '[1 2]', '{"metadata":{"name":"x"},"spec":', 'undefined',
  ])('refuses %j as JSON.parse does', (text) => {
    expect([parses(text), isJsonText(text)]).toEqual([false, false]);
  });

  it('agrees with JSON.parse on every prefix and one-character change of a realistic object', () => {
    const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a-b', labels: { 'x/y': 'z' } }, data: { n: '-1.5e3', u: 'é\u2028"\\' }, list: [0, -0.25, 1e21, true, false, null, [], {}] };
    const text = JSON.stringify(object, null, 1);
    const alphabet = ['', ' ', '"', '\\', ',', ':', '{', '}', '[', ']', '0', '-', '.', 'e', 'a', '\n', '\u0001'];
    let checked = 0;
    for (let i = 0; i <= text.length; i++) {
      const variants = [text.slice(0, i), ...alphabet.map((c) => text.slice(0, i) + c + text.slice(i + 1))];
      for (const v of variants) {
        expect([v, isJsonText(v)]).toEqual([v, parses(v)]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('checks deep nesting without recursion', () => {
    const depth = 200_000;
    expect(isJsonText('['.repeat(depth) + ']'.repeat(depth))).toBe(true);
    expect(isJsonText('['.repeat(depth) + ']'.repeat(depth - 1))).toBe(false);
  });
});
