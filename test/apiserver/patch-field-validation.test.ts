/**
 * fieldValidation on PATCH, as kube-apiserver's patch handler applies it: the patched object is
 * decoded strictly (unknown fields), and a merge or strategic merge patch's own text is checked for
 * duplicate fields. Strict fails with upstream's 422 against `patch`; Warn stores the object
 * without the unknown fields and says so in Warning headers; Ignore drops them silently.
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

const CM = '/api/v1/namespaces/default/configmaps';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';

async function configMap(name: string): Promise<void> {
  const res = await raw(srv, 'POST', CM, { body: { metadata: { name }, data: { k: 'v1' } } });
  expect(res.status).toBe(201);
}

async function stored(name: string): Promise<Record<string, unknown> & { metadata: Record<string, unknown>; data: Record<string, string> }> {
  return (await raw(srv, 'GET', `${CM}/${name}`)).json as never;
}

function patch(name: string, mode: string | undefined, contentType: string, body: string): Promise<RawResponse> {
  const query = mode === undefined ? '' : `?fieldValidation=${mode}`;
  return raw(srv, 'PATCH', `${CM}/${name}${query}`, { body, contentType });
}

/** Upstream's NewInvalid(GroupKind{}, "", [Invalid("patch", <patched object>, <strict decoding error>)]). */
function expectStrictFailure(res: RawResponse, detail: string): void {
  expect(res.status).toBe(422);
  expect(res.json?.reason).toBe('Invalid');
  const message = String(res.json?.message);
  expect(message.startsWith(' "" is invalid: patch: Invalid value: "{')).toBe(true);
  expect(message.endsWith(`: strict decoding error: ${detail}`)).toBe(true);
  const causes = (res.json?.details as { causes?: { reason: string; field: string; message: string }[] }).causes ?? [];
  expect(causes).toHaveLength(1);
  expect(causes[0]?.reason).toBe('FieldValueInvalid');
  expect(causes[0]?.field).toBe('patch');
  expect(causes[0]?.message.endsWith(`: strict decoding error: ${detail}`)).toBe(true);
}

describe.each([
  ['merge patch', MERGE, '{"bogus":1,"metadata":{"colour":"red"},"data":{"k":"v2"}}'],
  ['strategic merge patch', STRATEGIC, '{"bogus":1,"metadata":{"colour":"red"},"data":{"k":"v2"}}'],
  ['JSON patch', JSON_PATCH, '[{"op":"add","path":"/bogus","value":1},{"op":"add","path":"/metadata/colour","value":"red"},{"op":"replace","path":"/data/k","value":"v2"}]'],
])('%s', (label, contentType, body) => {
  const base = label.toLowerCase().replace(/ /g, '-');

  it('Strict rejects the unknown fields of the patched object and stores nothing', async () => {
    const name = `${base}-strict`;
    await configMap(name);
    expectStrictFailure(await patch(name, 'Strict', contentType, body), 'unknown field "bogus", unknown field "metadata.colour"');
    const after = await stored(name);
    expect(after.data.k).toBe('v1');
    expect(after).not.toHaveProperty('bogus');
  });

  it('Warn (the default) stores the patch without the unknown fields and warns of each', async () => {
    for (const mode of ['Warn', undefined]) {
      const name = `${base}-warn-${(mode ?? 'default').toLowerCase()}`;
      await configMap(name);
      const res = await patch(name, mode, contentType, body);
      expect(res.status).toBe(200);
      expect(String(res.headers.warning)).toBe('299 - "unknown field \\"bogus\\"", 299 - "unknown field \\"metadata.colour\\""');
      const after = await stored(name);
      expect(after.data.k).toBe('v2');
      expect(after).not.toHaveProperty('bogus');
      expect(after.metadata).not.toHaveProperty('colour');
    }
  });

  it('Ignore stores the patch without the unknown fields, silently', async () => {
    const name = `${base}-ignore`;
    await configMap(name);
    const res = await patch(name, 'Ignore', contentType, body);
    expect(res.status).toBe(200);
    expect(res.headers.warning).toBeUndefined();
    const after = await stored(name);
    expect(after.data.k).toBe('v2');
    expect(after).not.toHaveProperty('bogus');
    expect(after.metadata).not.toHaveProperty('colour');
  });
});

describe.each([
  ['merge patch', MERGE],
  ['strategic merge patch', STRATEGIC],
])('duplicate fields in a %s', (label, contentType) => {
  const base = `dup-${label.replace(/ /g, '-')}`;
  const body = '{"data":{"k":"v2","k":"v3"},"bogus":1}';

  it('Strict reports them ahead of the unknown fields', async () => {
    const name = `${base}-strict`;
    await configMap(name);
    expectStrictFailure(await patch(name, 'Strict', contentType, body), 'duplicate field "data.k", unknown field "bogus"');
    expect((await stored(name)).data.k).toBe('v1');
  });

  it('Warn warns of them and applies the patch as parsed (the last value wins)', async () => {
    const name = `${base}-warn`;
    await configMap(name);
    const res = await patch(name, 'Warn', contentType, body);
    expect(res.status).toBe(200);
    expect(String(res.headers.warning)).toBe('299 - "duplicate field \\"data.k\\"", 299 - "unknown field \\"bogus\\""');
    expect((await stored(name)).data.k).toBe('v3');
  });

  it('Ignore says nothing', async () => {
    const name = `${base}-ignore`;
    await configMap(name);
    const res = await patch(name, 'Ignore', contentType, body);
    expect(res.status).toBe(200);
    expect(res.headers.warning).toBeUndefined();
  });
});

describe('a JSON patch decoded strictly as operations', () => {
  // Upstream's integration test (field_validation_test.go) words these as below.
  const body = '[{"op":"add","path":"/data/a","value":"1","foo":"bar"},{"op":"add","path":"/data/b","path":"/data/c","value":"1"},{"op":"add","path":"/bogus","value":1}]';

  it('Strict reports unknown and repeated operation fields, then the result\'s unknown fields', async () => {
    await configMap('ops-strict');
    expectStrictFailure(
      await patch('ops-strict', 'Strict', JSON_PATCH, body),
      'json patch unknown field "[0].foo", json patch duplicate field "[1].path", unknown field "bogus"',
    );
  });

  it('Warn warns of each and applies the operations as parsed', async () => {
    await configMap('ops-warn');
    const res = await patch('ops-warn', 'Warn', JSON_PATCH, body);
    expect(res.status).toBe(200);
    expect(String(res.headers.warning)).toBe(
      '299 - "json patch unknown field \\"[0].foo\\"", 299 - "json patch duplicate field \\"[1].path\\"", 299 - "unknown field \\"bogus\\""',
    );
    expect((await stored('ops-warn')).data).toEqual({ k: 'v1', a: '1', c: '1' });
  });
});

it('a type error in the patched object is reported alone, ahead of any unknown field (as upstream)', async () => {
  await configMap('type-first');
  const res = await patch('type-first', 'Strict', MERGE, '{"bogus":1,"data":{"k":1}}');
  expect(res.status).toBe(422);
  expect(String(res.json?.message)).not.toContain('strict decoding error');
});
