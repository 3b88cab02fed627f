import {
  generateName,
  isDns1123Label,
  isDns1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  validateLabelName,
  validatePathSegmentName,
  validateSubdomainName,
} from './names.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe('DNS-1123 names', () => {
  it.each<[string, string[]]>([
    ['abc', []],
    ['a.b-c.d', []],
    ['Abc', [SUBDOMAIN_MSG]],
    ['-abc', [SUBDOMAIN_MSG]],
    ['a_b', [SUBDOMAIN_MSG]],
    ['a'.repeat(254), ['must be no more than 253 characters']],
  ])('subdomain %j', (name, want) => {
    expect(isDns1123Subdomain(name)).toEqual(want);
  });

  it.each<[string, string[]]>([
    ['my-ns', []],
    ['a.b', ['must not contain dots']],
    ['My', [LABEL_MSG]],
    ['a'.repeat(64), ['must be no more than 63 characters']],
  ])('label %j', (name, want) => {
    expect(isDns1123Label(name)).toEqual(want);
  });

  it('accepts a generateName prefix ending in a dash, as upstream masks it', () => {
    expect(validateSubdomainName('my-sa-', true)).toEqual([]);
    expect(validateSubdomainName('my-sa-', false)).toEqual([SUBDOMAIN_MSG]);
    expect(validateLabelName('ns-', true)).toEqual([]);
    expect(validateSubdomainName('Bad-', true)).toEqual([SUBDOMAIN_MSG]);
  });
});

describe('path segment names', () => {
  it.each<[string, boolean, string[]]>([
    ['node-csr-Abc_123:x', false, []],
    ['.', false, ["may not be '.'"]],
    ['..', false, ["may not be '..'"]],
    ['a/b%c', false, ["may not contain '/'", "may not contain '%'"]],
    ['.', true, []],
    ['a/', true, ["may not contain '/'"]],
  ])('%j (prefix %s)', (name, prefix, want) => {
    expect(validatePathSegmentName(name, prefix)).toEqual(want);
  });
});

describe('qualified names and label values', () => {
  it('accepts prefixed and plain keys', () => {
    expect(isQualifiedName('kubernetes.io/metadata.name')).toEqual([]);
    expect(isQualifiedName('My_Key.1')).toEqual([]);
  });

  it('reports prefix and name problems in upstream order', () => {
    const errs = isQualifiedName('/x');
    expect(errs).toEqual(['prefix part must be non-empty']);
    const both = isQualifiedName('Bad_/');
    expect(both[0]).toBe(`prefix part ${SUBDOMAIN_MSG}`);
    expect(both[1]).toBe('name part must be non-empty');
    expect(both[2]).toMatch(/^name part must consist of alphanumeric characters/);
    expect(isQualifiedName('x'.repeat(64))).toEqual(['name part must be no more than 63 characters']);
  });

  it('validates label values', () => {
    expect(isValidLabelValue('')).toEqual([]);
    expect(isValidLabelValue('v1.2_3')).toEqual([]);
    expect(isValidLabelValue('-v')[0]).toMatch(/^a valid label must be an empty string/);
  });
});

describe('generateName', () => {
  it('appends five characters from the upstream alphabet and truncates the base to 58', () => {
    const name = generateName('node-csr-');
    expect(name).toMatch(/^node-csr-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const long = generateName('x'.repeat(80));
    expect(long).toHaveLength(63);
    expect(long.slice(0, 58)).toBe('x'.repeat(58));
  });
});
