/**
 * Label selector cases ported as data from kubernetes
 * staging/src/k8s.io/apimachinery/pkg/labels/selector_test.go (TestSelectorParse, TestDeterministicParse,
 * TestSelectorMatches, TestRequirementConstructor, TestRequirementSelectorMatching, TestSetSelectorParser).
 * Upstream builds some selectors from Requirement values; here each is written as the text that parses to it.
 */
import { ApiError } from '../../src/apiserver/http/errors.js';
import { type LabelOperator, parseLabelSelector } from '../../src/apiserver/selectors/labels.js';

const parses = (text: string): boolean => {
  try {
    parseLabelSelector(text);
    return true;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe(400);
    return false;
  }
};

describe('TestSelectorParse', () => {
  it.each(['x=a,y=b,z=c', '', 'x!=a,y=b', 'x=', 'x= ', 'x=,z= ', 'x= ,z= ', '!x', 'x>1', 'x>1,z<5'])('%j parses', (text) => {
    expect(parses(text)).toBe(true);
  });
  it.each(['x=a||y=b', 'x==a==b', '!x=a', 'x<a'])('%j is refused with a 400', (text) => {
    expect(parses(text)).toBe(false);
  });
});

it('TestDeterministicParse: requirement order does not depend on the text order', () => {
  expect(parseLabelSelector('x=a,a=x').requirements).toEqual(parseLabelSelector('a=x,x=a').requirements);
});

describe('TestSelectorMatches and TestRequirementSelectorMatching', () => {
  const labelset = { foo: 'bar', baz: 'blah' };
  it.each<[string, Record<string, string>, boolean]>([
    ['', { x: 'y' }, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x', { x: 'z' }, true],
    ['!x', { y: 'z' }, true],
    ['x>1', { x: '2' }, true],
    ['x<1', { x: '0' }, true],
    ['x=z', {}, false],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['x', { y: 'z' }, false],
    ['!x', { x: 'z' }, false],
    ['x>1', { x: '0' }, false],
    ['x<1', { x: '2' }, false],
    ['foo=bar', labelset, true],
    ['baz=blah', labelset, true],
    ['foo=bar,baz=blah', labelset, true],
    ['foo=blah', labelset, false],
    ['baz=bar', labelset, false],
    ['foo=bar,foobar=bar,baz=blah', labelset, false],
    // TestRequirementSelectorMatching
    ['x in (foo),y notin (alpha)', { x: 'foo', y: 'baz' }, true],
    ['x in (foo),y in (alpha)', { x: 'foo', y: 'baz' }, false],
    ['x notin (),y', { y: '' }, true],
    ['!x,y', { y: '' }, true],
    ['x notin (),!y', { y: '' }, false],
    ['x in ()', { y: 'baz' }, false],
    ['z>1', { z: '2' }, true],
    ['z>1', { z: 'v2' }, false],
  ])('%j against %j is %s', (text, labels, match) => {
    expect(parseLabelSelector(text).matches(labels)).toBe(match);
  });
});

describe('TestRequirementConstructor', () => {
  it.each<[string, boolean]>([
    ['x in (foo)', true],
    ['x notin (foo)', true],
    ['x', true],
    ['!x', true],
    ['1foo in (bar)', true],
    ['1234 in (bar)', true],
    ['y>1', true],
    ['z<6', true],
    ['foo>bar', false],
    ['barz<blah', false],
    [`${'a'.repeat(254)}`, false], // a key longer than 253 characters
  ])('%j valid: %s', (text, valid) => {
    expect(parses(text)).toBe(valid);
  });
});

describe('TestSetSelectorParser', () => {
  type Row = [string, Array<[string, LabelOperator, string[]]> | 'invalid'];
  it.each<Row>([
    ['', []],
    ['\rx', [['x', 'exists', []]]],
    ['this-is-a-dns.domain.com/key-with-dash', [['this-is-a-dns.domain.com/key-with-dash', 'exists', []]]],
    ['this-is-another-dns.domain.com/key-with-dash in (so,what)', [['this-is-another-dns.domain.com/key-with-dash', 'in', ['so', 'what']]]],
    ['0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)', [['0.1.2.domain/99', 'notin', ['10.10.100.1', 'tick.tack.clock']]]],
    ['foo  in\t (abc)', [['foo', 'in', ['abc']]]],
    ['x notin\n (abc)', [['x', 'notin', ['abc']]]],
    ['x  notin\t\t\t(abc,def)', [['x', 'notin', ['abc', 'def']]]],
    ['x in (abc,def)', [['x', 'in', ['abc', 'def']]]],
    ['x in (abc,)', [['x', 'in', ['', 'abc']]]],
    ['x in ()', [['x', 'in', ['']]]],
    [
      'x notin (abc,def),bar,z in (),w',
      [
        ['bar', 'exists', []],
        ['w', 'exists', []],
        ['x', 'notin', ['abc', 'def']],
        ['z', 'in', ['']],
      ],
    ],
    [
      'x,y in (a)',
      [
        ['x', 'exists', []],
        ['y', 'in', ['a']],
      ],
    ],
    ['x=a', [['x', '=', ['a']]]],
    ['x>1', [['x', 'gt', ['1']]]],
    ['x<7', [['x', 'lt', ['7']]]],
    [
      'x=a,y!=b',
      [
        ['x', '=', ['a']],
        ['y', '!=', ['b']],
      ],
    ],
    [
      'x=a,y!=b,z in (h,i,j)',
      [
        ['x', '=', ['a']],
        ['y', '!=', ['b']],
        ['z', 'in', ['h', 'i', 'j']],
      ],
    ],
    ['x=a||y=b', 'invalid'],
    ['x,,y', 'invalid'],
    [',x,y', 'invalid'],
    ['x nott in (y)', 'invalid'],
    ['x notin ( )', [['x', 'notin', ['']]]],
    ['x notin (, a)', [['x', 'notin', ['', 'a']]]],
    ['a in (xyz),', 'invalid'],
    ['a in (xyz)b notin ()', 'invalid'],
    ['a ', [['a', 'exists', []]]],
    ['a in (x,y,notin, z,in)', [['a', 'in', ['in', 'notin', 'x', 'y', 'z']]]],
    ['a in (xyz abc)', 'invalid'],
    ['a notin(', 'invalid'],
    ['a (', 'invalid'],
    ['(', 'invalid'],
  ])('%j', (text, want) => {
    if (want === 'invalid') {
      expect(parses(text)).toBe(false);
      return;
    }
    const got = parseLabelSelector(text).requirements.map((r) => [r.key, r.operator, r.values]);
    expect(got).toEqual(want);
  });
});
