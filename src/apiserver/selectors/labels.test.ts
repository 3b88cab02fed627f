import { ApiError } from '../http/errors.js';
import { parseLabelSelector } from './labels.js';

const QUALIFIED =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

function parseError(text: string): ApiError {
  try {
    parseLabelSelector(text);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error(`selector ${JSON.stringify(text)} parsed`);
}

describe('parseLabelSelector matching', () => {
  const labels = { app: 'web', tier: 'front', n: '5', empty: '' };
  it.each<[string, Record<string, string> | undefined, boolean]>([
    ['', labels, true],
    ['', undefined, true],
    ['app=web', labels, true],
    ['app==web', labels, true],
    ['app = web', labels, true],
    ['  app=web ,  tier=front  ', labels, true],
    ['app=db', labels, false],
    ['app!=db', labels, true],
    ['app!=web', labels, false],
    ['missing!=x', labels, true],
    ['missing=x', labels, false],
    ['app in (db,web)', labels, true],
    ['app in (db)', labels, false],
    ['missing in (a)', labels, false],
    ['app notin (db)', labels, true],
    ['app notin (web)', labels, false],
    ['missing notin (a)', labels, true],
    ['app', labels, true],
    ['missing', labels, false],
    ['!missing', labels, true],
    ['!app', labels, false],
    ['n>4', labels, true],
    ['n>5', labels, false],
    ['n<6', labels, true],
    ['app>1', labels, false],
    ['missing<10', labels, false],
    ['empty=', labels, true],
    ['empty in (,a)', labels, true],
    ['app=web,tier=back', labels, false],
    ['in in (in)', { in: 'in' }, true],
    ['notin notin (notin)', { notin: 'x' }, true],
    ['example.com/app=web', { 'example.com/app': 'web' }, true],
    ['app=web', undefined, false],
    ['app!=web', undefined, true],
  ])('%j against %j is %s', (sel, l, want) => {
    expect(parseLabelSelector(sel).matches(l)).toBe(want);
  });

  it('reports empty and sorted, de-duplicated requirements', () => {
    expect(parseLabelSelector('').empty).toBe(true);
    const s = parseLabelSelector('z=1,a in (c,b,c)');
    expect(s.empty).toBe(false);
    expect(s.requirements).toEqual([
      { key: 'a', operator: 'in', values: ['b', 'c'] },
      { key: 'z', operator: '=', values: ['1'] },
    ]);
  });
});

describe('parseLabelSelector errors (400 BadRequest, upstream text)', () => {
  it.each<[string, string]>([
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b,', "found '', expected: identifier after ','"],
    ['a=b,,c', "found ',', expected: identifier after ','"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a (b)', "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['env IN (a)', "unable to parse requirement: found 'IN', expected: in, notin, =, ==, !=, gt, lt"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a in (b,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['a==(', "unable to parse requirement: found '(', expected: identifier"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['app:monolith', `unable to parse requirement: <nil>: Invalid value: "app:monolith": ${QUALIFIED}`],
    ['a/b/c=d', `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ${QUALIFIED.slice('name part '.length)} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`],
    ['app=demo-{nginx}', `unable to parse requirement: values[0][app]: Invalid value: "demo-{nginx}": ${LABEL_VALUE}`],
    ['env>qa', `unable to parse requirement: values[0]: Invalid value: "qa": for 'Gt', 'Lt' operators, the value must be an integer`],
    [
      'n>-1',
      `unable to parse requirement: values[0][n]: Invalid value: "-1": ${LABEL_VALUE}`,
    ],
  ])('%j', (sel, message) => {
    const err = parseError(sel);
    expect(err.code).toBe(400);
    expect(err.reason).toBe('BadRequest');
    expect(err.message).toBe(message);
  });

  it('reports a too-long value with the length message', () => {
    expect(parseError(`a=${'x'.repeat(64)}`).message).toBe(
      `unable to parse requirement: values[0][a]: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`,
    );
  });

  it('joins several value errors as an aggregate', () => {
    expect(parseError('a in (-x,-y)').message).toBe(
      `unable to parse requirement: [values[0][a]: Invalid value: "-x": ${LABEL_VALUE}, values[1][a]: Invalid value: "-y": ${LABEL_VALUE}]`,
    );
  });
});
