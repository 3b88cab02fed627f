/**
 * Name and label validation cases ported as data from kubernetes
 * staging/src/k8s.io/apimachinery/pkg/util/validation/validation_test.go (TestIsDNS1123Label,
 * TestIsDNS1123Subdomain, TestIsQualifiedName, TestIsValidLabelValue, TestIsConfigMapKey).
 */
import { isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue } from '../../src/apiserver/validation/names.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const a = (n: number, c = 'a'): string => c.repeat(n);

const table = (good: string[], bad: string[]): Array<[string, boolean]> => [
  ...good.map((v): [string, boolean] => [v, true]),
  ...bad.map((v): [string, boolean] => [v, false]),
];

const LABEL_BAD = [
  '', 'A', 'ABC', 'aBc', 'A1', 'A-1', '1-A', '-', 'a-', '-a', '1-', '-1', '_', 'a_', '_a', 'a_b', '1_', '_1', '1_2',
  ' ', 'a ', ' a', 'a b', '1 ', ' 1', '1 2',
];

describe('TestIsDNS1123Label', () => {
  it.each(
    table(
      ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', '0', '01', '012', '1a', '1-a', '1--a--b--2', a(63)],
      [...LABEL_BAD, '.', 'a.', '.a', 'a.b', '1.', '.1', '1.2', a(64)],
    ),
  )('%j valid: %s', (value, valid) => {
    expect(isDns1123Label(value).length === 0).toBe(valid);
  });
});

describe('TestIsDNS1123Subdomain', () => {
  it.each(
    table(
      [
        'a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', '0', '01', '012', '1a', '1-a', '1--a--b--2',
        'a.a', 'ab.a', 'abc.a', 'a1.a', 'a-1.a', 'a--1--2--b.a', 'a.1', 'ab.1', 'abc.1', 'a1.1', 'a-1.1', 'a--1--2--b.1',
        '0.a', '01.a', '012.a', '1a.a', '1-a.a', '0.1', '01.1', '012.1', '1a.1', '1-a.1', '1--a--b--2.1',
        'a.b.c.d.e', 'aa.bb.cc.dd.ee', '1.2.3.4.5', '11.22.33.44.55', a(253),
      ],
      [
        ...LABEL_BAD, '.', 'a.', '.a', 'a..b', '1.', '.1', '1..2',
        'A.a', 'aB.a', 'ab.A', 'A1.a', 'a1.A', 'A.1', 'aB.1', 'A1.1', '1A.1', '0.A', '01.A', '012.A', '1A.a', '1a.A',
        'A.B.C.D.E', 'AA.BB.CC.DD.EE', 'a.B.c.d.e', 'aa.bB.cc.dd.ee', 'a@b', 'a,b', 'a;b', 'a:b', 'a%b', 'a?b', 'a$b', a(254),
      ],
    ),
  )('%j valid: %s', (value, valid) => {
    expect(isDns1123Subdomain(value).length === 0).toBe(valid);
  });
});

describe('TestIsQualifiedName', () => {
  it.each(
    table(
      [
        'simple', 'now-with-dashes', '1-starts-with-num', '1234', 'simple/simple', 'now-with-dashes/simple',
        'now-with-dashes/now-with-dashes', 'now.with.dots/simple', 'now-with.dashes-and.dots/simple', '1-num.2-num/3-num',
        '1234/5678', '1.2.3.4/5678', 'Uppercase_Is_OK_123', 'example.com/Uppercase_Is_OK_123', 'requests.storage-foo',
        a(63), `${a(253)}/${a(63, 'b')}`,
      ],
      [
        'nospecialchars%^=@', 'cantendwithadash-', '-cantstartwithadash-', 'only/one/slash', 'Example.com/abc',
        'example_com/abc', 'example.com/', '/simple', a(64), `${a(254)}/abc`,
      ],
    ),
  )('%j valid: %s', (value, valid) => {
    expect(isQualifiedName(value).length === 0).toBe(valid);
  });
});

describe('TestIsValidLabelValue', () => {
  it.each(
    table(
      ['simple', 'now-with-dashes', '1-starts-with-num', 'end-with-num-1', '1234', a(63), ''],
      [
        'nospecialchars%^=@', 'Tama-nui-te-rā.is.Māori.sun', '\\backslashes\\are\\bad', '-starts-with-dash',
        'ends-with-dash-', '.starts.with.dot', 'ends.with.dot.', a(64),
      ],
    ),
  )('%j valid: %s', (value, valid) => {
    expect(isValidLabelValue(value).length === 0).toBe(valid);
  });
});

// IsConfigMapKey is checked where it applies: the keys of a ConfigMap the server stores.
describe('TestIsConfigMapKey (through the API)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.close());

  it.each(
    table(
      ['a', 'good', 'good-good', 'still.good', 'this.is.also.good', '.so.is.this', 'THIS_IS_GOOD', 'so_is_this_17'],
      ['.', '..', '..bad', 'b*d', 'bad!&bad'],
    ),
  )('%j valid: %s', async (key, valid) => {
    const name = `k${Math.random().toString(36).slice(2, 10)}`;
    const res = await raw(server, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name },
      data: { [key]: 'v' },
      },
    });
    expect(res.status).toBe(valid ? 201 : 422);
  });
});
