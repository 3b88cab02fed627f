import { itWithFixtures, readFixtureText } from '../../../test/helpers/fixtures.js';
import { ApiError } from '../http/errors.js';
import { duplicateFieldMessage, goJsonSyntaxError, parseJsonStrict } from './json-body.js';
import { MAX_NESTING_DEPTH } from './depth.js';

function parseError(text: string, kind?: string): ApiError {
  try {
    parseJsonStrict(text, kind ? { kind } : {});
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

describe('parseJsonStrict', () => {
  itWithFixtures('parses the upstream fixtures with no duplicates', () => {
    for (const f of ['core.v1.Pod.json', 'certificates.k8s.io.v1.CertificateSigningRequest.json']) {
      const text = readFixtureText(f);
      const r = parseJsonStrict(text);
      expect(r.value).toEqual(JSON.parse(text));
      expect(r.duplicateFields).toEqual([]);
    }
  });

  it.each<[string, string[]]>([
    ['{"a":1,"a":2}', ['a']],
    ['{"metadata":{"name":"x","name":"y"}}', ['metadata.name']],
    ['{"spec":{"containers":[{"name":"a"},{"name":"b","image":"i","image":"j"}]}}', ['spec.containers[1].image']],
    ['{"a":{"b":1},"a":{"b":2},"a":3}', ['a', 'a']],
    ['{"a":"x\\"y","b":{"a":1},"c":[{"a":1},{"a":1}]}', []],
    ['{"k":"has \\"quoted\\": colon","k2":1}', []],
    ['{"\\u0061":1,"a":2}', ['a']],
    ['[{"x":1,"x":2}]', ['[0].x']],
  ])('%s reports %j', (text, want) => {
    const r = parseJsonStrict(text);
    expect(r.duplicateFields).toEqual(want);
    expect(r.value).toEqual(JSON.parse(text));
  });

  it('keeps the last value of a duplicate, as Go does', () => {
    expect(parseJsonStrict('{"a":1,"a":2}').value).toEqual({ a: 2 });
    expect(duplicateFieldMessage('metadata.name')).toBe('duplicate field "metadata.name"');
  });
});

describe('malformed JSON gives Go encoding/json texts as 400s', () => {
  it.each<[string, string]>([
    ['', 'unexpected end of JSON input'],
    ['{', 'unexpected end of JSON input'],
    ['{"a":"x', 'unexpected end of JSON input'],
    ['x', "invalid character 'x' looking for beginning of value"],
    ['{a:1}', "invalid character 'a' looking for beginning of object key string"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
    ['[1 2]', "invalid character '2' after array element"],
    ['[1,]', "invalid character ']' looking for beginning of value"],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
    ['{"a":1}x', "invalid character 'x' after top-level value"],
    ['{"a":tru}', "invalid character '}' in literal true (expecting 'e')"],
    ['{"a":nul}', "invalid character '}' in literal null (expecting 'l')"],
    ['{"a":-}', "invalid character '}' in numeric literal"],
    ['{"a":1.}', "invalid character '}' after decimal point in numeric literal"],
    ['{"a":1e}', "invalid character '}' in exponent of numeric literal"],
    ['{"a":01}', "invalid character '1' after object key:value pair"],
    ['{"a":"\\q"}', "invalid character 'q' in string escape code"],
    ['{"a":"\\u12g4"}', "invalid character 'g' in \\u hexadecimal character escape"],
    ['{"a":"x\ny"}', "invalid character '\\n' in string literal"],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string"],
    ['{"a":é}', "invalid character 'Ã' looking for beginning of value"],
  ])('%j', (text, message) => {
    const err = parseError(text);
    expect(err.code).toBe(400);
    expect(err.reason).toBe('BadRequest');
    expect(err.message).toBe(message);
  });

  it('words the error as the create decoder does when the kind is known', () => {
    expect(parseError('{"apiVersion":"v1","kind":"ServiceAccount",', 'ServiceAccount').message).toBe(
      `the object provided is unrecognized (must be of type ServiceAccount): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Ser ...)`,
    );
    expect(parseError('', 'Secret').message).toBe(
      `the object provided is unrecognized (must be of type Secret): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)`,
    );
  });

  it('rejects nesting past the cap with Go\'s text, without overflowing the stack', () => {
    const deep = '['.repeat(MAX_NESTING_DEPTH + 1) + ']'.repeat(MAX_NESTING_DEPTH + 1);
    expect(parseError(deep).message).toBe("invalid character '[' exceeded max depth");
    const ok = '['.repeat(MAX_NESTING_DEPTH) + ']'.repeat(MAX_NESTING_DEPTH);
    expect(parseJsonStrict(ok).duplicateFields).toEqual([]);
    expect(goJsonSyntaxError('['.repeat(200000))).toBe("invalid character '[' exceeded max depth");
  });
});
