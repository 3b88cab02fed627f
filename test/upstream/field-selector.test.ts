/**
 * Field selector cases ported as data from kubernetes
 * staging/src/k8s.io/apimachinery/pkg/fields/selector_test.go (TestSelectorParse, TestEscapeValue,
 * TestDeterministicParse, TestSelectorMatches, TestRequiresExactMatch). The server checks fields against
 * each kind's selectable fields; these rows allow the fields they use.
 */
import { ApiError } from '../../src/apiserver/http/errors.js';
import { escapeValue, parseFieldSelector, unescapeValue } from '../../src/apiserver/selectors/fields.js';

const FIELDS = ['x', 'y', 'z', 'a', 'b', 'foo', 'baz', 'foobar', 'complex', 'notin', 'test'];
const parse = (text: string) => parseFieldSelector(text, FIELDS);

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('no error');
}

describe('TestSelectorParse', () => {
  it.each(['x=a,y=b,z=c', '', 'x!=a,y=b', 'x=a||y\\=b', 'x=a\\=\\=b'])('%j parses', (text) => {
    expect(() => parse(text)).not.toThrow();
  });
  it.each(['x=a||y=b', 'x==a==b', 'x=a,b', 'x in (a)', 'x in (a,b,c)', 'x'])('%j is a 400', (text) => {
    expect(refusal(() => parse(text)).code).toBe(400);
  });
});

it('TestDeterministicParse', () => {
  expect(parse('x=a,a=x').requirements).toEqual(parse('a=x,x=a').requirements);
});

describe('TestEscapeValue', () => {
  it.each<[string, string]>([
    ['', ''],
    ['a', 'a'],
    ['=', '\\='],
    [',', '\\,'],
    ['\\', '\\\\'],
    ['\\=\\,\\', '\\\\\\=\\\\\\,\\\\'],
  ])('%j escapes to %j and back', (raw, escaped) => {
    expect(escapeValue(raw)).toBe(escaped);
    expect(unescapeValue(escaped)).toBe(raw);
  });
  it.each(['\\', '\\\\\\', '\\a'])('%j is an invalid escape sequence', (bad) => {
    expect(refusal(() => unescapeValue(bad)).message).toContain('invalid escape sequence');
  });
});

describe('TestSelectorMatches', () => {
  const fieldset = { foo: 'bar', baz: 'blah', complex: '=value\\,\\' };
  it.each<[string, Record<string, string>, boolean]>([
    ['', { x: 'y' }, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['foo=bar', fieldset, true],
    ['baz=blah', fieldset, true],
    ['foo=bar,baz=blah', fieldset, true],
    ['foo=bar,baz=blah,complex=\\=value\\\\\\,\\\\', fieldset, true],
    ['foo=blah', fieldset, false],
    ['baz=bar', fieldset, false],
    ['foo=bar,foobar=bar,baz=blah', fieldset, false],
  ])('%j against %j is %s', (text, fields, match) => {
    expect(parse(text).matches(fields)).toBe(match);
  });
});

describe('TestRequiresExactMatch', () => {
  it.each<[string, string | undefined]>([
    ['', undefined],
    ['a=b', undefined],
    ['test=b', 'b'],
    ['test=', ''],
    ['test!=b', undefined],
    ['test!=', undefined],
    ['a=,test=b', 'b'],
  ])('%j requires test=%j', (text, value) => {
    expect(parse(text).requiresExactMatch('test')).toBe(value);
  });
});
