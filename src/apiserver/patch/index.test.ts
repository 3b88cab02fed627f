import { describeWithFixtures, readFixtureJson } from '../../../test/helpers/fixtures.js';
import type { KObject } from '../../api/meta.js';
import { ApiError } from '../http/errors.js';
import { applyPatch, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH } from './index.js';

const sa = (): KObject => readFixtureJson<KObject>('core.v1.ServiceAccount.json');
const KIND = { group: '', version: 'v1', kind: 'ServiceAccount' };
const GENERIC_422 = 'the server rejected our request due to an error in our request';

function patchError(type: string, body: string, original: KObject = sa()): ApiError {
  try {
    applyPatch(type, original, body, KIND);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('patch applied');
}

describeWithFixtures('JSON patch', () => {
  it('applies RFC 6902 operations to a copy', () => {
    const original = Object.freeze(sa());
    const ops = [
      { op: 'add', path: '/metadata/labels/new', value: 'v' },
      { op: 'replace', path: '/automountServiceAccountToken', value: false },
      { op: 'remove', path: '/imagePullSecrets' },
      { op: 'copy', from: '/metadata/name', path: '/metadata/annotations/copied' },
      { op: 'move', from: '/metadata/generateName', path: '/metadata/annotations/moved' },
      { op: 'test', path: '/secrets/0/name', value: 'nameValue' },
      { op: 'add', path: '/secrets/-', value: { name: 's2' } },
    ];
    const out = applyPatch(`${JSON_PATCH}; charset=utf-8`, original, Buffer.from(JSON.stringify(ops)), KIND);
    expect(out.metadata?.labels).toEqual({ labelsKey: 'labelsValue', new: 'v' });
    expect(out.automountServiceAccountToken).toBe(false);
    expect(out).not.toHaveProperty('imagePullSecrets');
    expect(out.metadata?.annotations).toEqual({ annotationsKey: 'annotationsValue', copied: 'nameValue', moved: 'generateNameValue' });
    expect(out.metadata).not.toHaveProperty('generateName');
    expect((out.secrets as unknown[]).length).toBe(2);
    expect(original.automountServiceAccountToken).toBe(true);
  });

  it('treats a null document as no operations', () => {
    expect(applyPatch(JSON_PATCH, sa(), 'null', KIND)).toEqual(sa());
  });

  it.each<[string, string]>([
    ['failed test', '[{"op":"test","path":"/metadata/name","value":"other"}]'],
    ['missing path on remove', '[{"op":"remove","path":"/nope"}]'],
    ['missing path on replace', '[{"op":"replace","path":"/nope","value":1}]'],
    ['add under a missing parent', '[{"op":"add","path":"/a/b/c","value":1}]'],
    ['unknown op', '[{"op":"frobnicate","path":"/a"}]'],
    ['missing op', '[{"path":"/a"}]'],
    ['null op', '[null]'],
    ['array index out of range', '[{"op":"add","path":"/secrets/5","value":{}}]'],
    ['prototype pollution', '[{"op":"add","path":"/__proto__/polluted","value":1}]'],
    ['copy from a missing path', '[{"op":"copy","from":"/nope","path":"/x"}]'],
  ])('%s is the generic 422', (_name, body) => {
    const err = patchError(JSON_PATCH, body);
    expect(err.code).toBe(422);
    expect(err.reason).toBe('Invalid');
    expect(err.message).toBe(GENERIC_422);
    expect(err.toStatus().details).toBeUndefined();
  });

  it.each<[string, string]>([
    ['[', 'error decoding patch: unexpected end of JSON input'],
    ['{"op":"add"}', 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp'],
    ['"x"', 'error decoding patch: json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp'],
    ['[1]', 'error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp'],
    ['[{"op":1,"path":"/a"}]', 'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string'],
    ['[{"op":"add","path":true}]', 'error decoding patch: json: cannot unmarshal bool into Go struct field jsonPatchOp.path of type string'],
  ])('%s is a 400', (body, message) => {
    const err = patchError(JSON_PATCH, body);
    expect(err.code).toBe(400);
    expect(err.message).toBe(message);
  });

  it('rejects more than 10000 operations with 413', () => {
    const ops = JSON.stringify(Array.from({ length: 10001 }, () => ({ op: 'test', path: '/kind', value: 'ServiceAccount' })));
    const err = patchError(JSON_PATCH, ops);
    expect(err.code).toBe(413);
    expect(err.reason).toBe('RequestEntityTooLarge');
    expect(err.message).toBe('Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
  });

  it('caps the growth from copy operations', () => {
    const big = { ...sa(), blob: 'x'.repeat(400 * 1024) };
    const ops = Array.from({ length: 9 }, (_, i) => ({ op: 'copy', from: '/blob', path: `/c${i}` }));
    expect(patchError(JSON_PATCH, JSON.stringify(ops), big).code).toBe(422);
    expect(applyPatch(JSON_PATCH, big, JSON.stringify(ops.slice(0, 2)), KIND)).toHaveProperty('c1');
  });

  it('refuses a patch that leaves a non-object', () => {
    const err = patchError(JSON_PATCH, '[{"op":"replace","path":"","value":[1]}]');
    expect(err.code).toBe(422);
    expect(err.message).toMatch(/^ServiceAccount "nameValue" is invalid: patch: Invalid value: "\[1\]": /);
  });
});

describeWithFixtures('merge patch', () => {
  it('merges objects, deletes nulls and replaces lists', () => {
    const out = applyPatch(MERGE_PATCH, sa(), '{"metadata":{"labels":{"labelsKey":null,"a":"b"}},"secrets":[{"name":"x"}],"newField":{"k":null,"j":1}}', KIND);
    expect(out.metadata?.labels).toEqual({ a: 'b' });
    expect(out.secrets).toEqual([{ name: 'x' }]);
    expect(out.newField).toEqual({ j: 1 });
  });

  it.each<[string, string]>([
    ['{', 'error decoding patch: unexpected end of JSON input'],
    ['[1]', 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}'],
    ['3', 'error decoding patch: json: cannot unmarshal number into Go value of type map[string]interface {}'],
    ['null', 'Invalid JSON Patch'],
  ])('%s is a 400', (body, message) => {
    const err = patchError(MERGE_PATCH, body);
    expect(err.code).toBe(400);
    expect(err.message).toBe(message);
  });
});

describeWithFixtures('strategic merge patch decoding and dispatch', () => {
  it.each<[string, string]>([
    ['{"a":', 'unexpected end of JSON input'],
    ['[]', 'json: cannot unmarshal array into Go value of type map[string]interface {}'],
    ['{"a" 1}', "invalid character '1' after object key"],
  ])('%s is a 400', (body, message) => {
    const err = patchError(STRATEGIC_MERGE_PATCH, body);
    expect(err.code).toBe(400);
    expect(err.message).toBe(message);
  });

  it('treats null as an empty patch', () => {
    expect(applyPatch(STRATEGIC_MERGE_PATCH, sa(), 'null', KIND)).toEqual(sa());
  });

  it.each(['application/json', 'application/apply-patch+yaml', 'text/plain', ''])('%j is 415 listing the patch types', (type) => {
    const err = patchError(type, '{}');
    expect(err.code).toBe(415);
    expect(err.reason).toBe('UnsupportedMediaType');
    expect(err.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
    );
  });
});
