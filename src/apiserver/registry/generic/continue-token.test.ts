/**
 * Continue tokens as k8s.io/apiserver/pkg/storage DecodeContinue reads them (continue.go and its
 * tests): the accepted forms, and each refusal in upstream's words, base64 and JSON failures being
 * Go's encoding/base64 and encoding/json errors.
 */
import { ApiError } from '../../http/errors.js';
import { decodeContinue, encodeContinue } from './continue-token.js';

const b64 = (text: string): string => Buffer.from(text).toString('base64url');

it('reads back what it writes, and tokens with a leading slash or a negative (latest) revision', () => {
  expect(decodeContinue(encodeContinue(12, 'default/cm\u0000'))).toEqual({ rv: 12, start: 'default/cm\u0000' });
  expect(decodeContinue(b64('{"v":"meta.k8s.io/v1","rv":-1,"start":"/a/b"}'))).toEqual({ rv: -1, start: 'a/b' });
  // Go's json matches field names case-insensitively.
  expect(decodeContinue(b64('{"V":"meta.k8s.io/v1","RV":3,"Start":"x"}'))).toEqual({ rv: 3, start: 'x' });
});

it.each([
  ['garbage', "invalid character '\\u0081' looking for beginning of value"],
  ['x', 'illegal base64 data at input byte 0'],
  ['abcde', 'illegal base64 data at input byte 4'],
  ['ab=c', 'illegal base64 data at input byte 2'],
  ['a+bc', 'illegal base64 data at input byte 1'],
  [b64(''), 'unexpected end of JSON input'],
  [b64('{"v":1}'), 'json: cannot unmarshal number into Go struct field continueToken.v of type string'],
  [b64('{"v":"meta.k8s.io/v1","rv":"5","start":"a"}'), 'json: cannot unmarshal string into Go struct field continueToken.rv of type int64'],
  [b64('{"v":"meta.k8s.io/v1","rv":1.5,"start":"a"}'), 'json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64'],
  [b64('[1]'), 'json: cannot unmarshal array into Go value of type storage.continueToken'],
  [b64('{"v":"meta.k8s.io/v1","rv":1,"start":"a",}'), "invalid character '}' looking for beginning of object key string"],
  [b64('null'), 'server does not recognize this encoded version '],
  [b64('{"v":"v2","rv":1,"start":"a"}'), 'server does not recognize this encoded version v2'],
  [b64('{"v":"meta.k8s.io/v1","rv":0,"start":"a"}'), 'incorrect encoded start resourceVersion (version meta.k8s.io/v1)'],
  [b64('{"v":"meta.k8s.io/v1","rv":1,"start":""}'), 'encoded start key empty'],
  [b64('{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/x"}'), '../secrets/x'],
  [b64('{"v":"meta.k8s.io/v1","rv":1,"start":"a//b"}'), 'a//b'],
])('refuses %s: %s', (token, why) => {
  let err: unknown;
  try {
    decodeContinue(token);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe(400);
  expect((err as ApiError).message).toBe(`invalid continue token: continue key is not valid: ${why}`);
});
