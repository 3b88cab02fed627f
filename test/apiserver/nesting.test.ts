/**
 * The nesting cap (src/apiserver/validation/depth.ts): a body or patch result nested past it is a
 * 4xx with Go's decoder wording, checked before any recursive code runs; at the cap every write
 * path (create, update, the four patch types) still works, so no recursion overflows below it.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MAX_NESTING_DEPTH } from '../../src/apiserver/validation/depth.js';

let s: TestServer;
const CR = '/apis/apps/v1/namespaces/default/controllerrevisions';

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

/** JSON text of `{"a":{"a":...1}}` with `levels` nested objects. */
const nested = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
/** A ControllerRevision whose body nests `depth` levels (the body itself is level 1). */
const revision = (name: string, depth: number): string =>
  `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"${name}"},"revision":1,"data":${nested(depth - 1)}}`;

const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const APPLY = 'application/apply-patch+yaml';

describe('past the cap', () => {
  it('a ControllerRevision with data nested 5,000 deep is a 400 with Go\'s wording, not a 500', async () => {
    const before = s.store.currentRevision();
    const r = await raw(s, 'POST', CR, { body: revision('deep', 5001) });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
    expect(r.json.message).toBe(
      'the object provided is unrecognized (must be of type ControllerRevision): couldn\'t get version/kind; json parse error: ' +
        'invalid character \'{\' exceeded max depth ({"apiVersion":"apps/v1","kind" ...)',
    );
    expect(s.store.currentRevision()).toBe(before);
  });

  it('the same body as YAML, protobuf-free PUT, and every patch type are 4xx', async () => {
    expect((await raw(s, 'POST', CR, { body: revision('target', 10) })).status).toBe(201);
    const before = s.store.currentRevision();
    const deepData = nested(MAX_NESTING_DEPTH + 5);
    const cases: [string, string, string, string, number, string][] = [
      ['YAML create', 'POST', CR, 'application/yaml', 400,
        'ControllerRevision in version "v1" cannot be handled as a ControllerRevision: error converting YAML to JSON: yaml: exceeded max depth of 500'],
      ['update', 'PUT', `${CR}/target`, 'application/json', 400, 'couldn\'t get version/kind; json parse error: invalid character \'{\' exceeded max depth'],
      ['merge patch', 'PATCH', `${CR}/target`, MERGE, 400, 'error decoding patch: invalid character \'{\' exceeded max depth'],
      ['strategic merge patch', 'PATCH', `${CR}/target`, SMP, 400, 'invalid character \'{\' exceeded max depth'],
      ['JSON patch', 'PATCH', `${CR}/target`, JSON_PATCH, 400, 'error decoding patch: invalid character \'{\' exceeded max depth'],
      ['apply', 'PATCH', `${CR}/target?fieldManager=deep`, APPLY, 400, 'error decoding YAML: yaml: exceeded max depth of 500'],
    ];
    for (const [what, method, path, contentType, code, message] of cases) {
      const body =
        contentType === JSON_PATCH
          ? `[{"op":"add","path":"/data/b","value":${deepData}}]`
          : method === 'PATCH' && contentType !== APPLY
            ? `{"data":${deepData}}`
            : revision('target', MAX_NESTING_DEPTH + 5);
      const r = await raw(s, method, path, { body, contentType });
      expect([what, r.status]).toEqual([what, code]);
      expect(r.json.message).toContain(message);
    }
    expect(s.store.currentRevision()).toBe(before);
  });

  it('a JSON patch whose result nests past the cap is a 422 against the patch', async () => {
    const half = Math.floor(MAX_NESTING_DEPTH * 0.9);
    expect((await raw(s, 'POST', CR, { body: revision('grow', half) })).status).toBe(201);
    const deepest = `/data${'/a'.repeat(half - 3)}`;
    const r = await raw(s, 'PATCH', `${CR}/grow`, {
      body: `[{"op":"add","path":"${deepest}/b","value":${nested(half - 2)}}]`,
      contentType: JSON_PATCH,
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(
      'ControllerRevision.apps "grow" is invalid: patch: Invalid value: "<nested too deep>": couldn\'t get version/kind; json parse error: invalid character \'{\' exceeded max depth',
    );
  });
});

describe('at the cap', () => {
  it('create, update, and all four patch types succeed', async () => {
    const name = 'edge';
    const created = await raw(s, 'POST', CR, { body: revision(name, MAX_NESTING_DEPTH) });
    expect(created.status).toBe(201);
    const updated = await raw(s, 'PUT', `${CR}/${name}`, { body: revision(name, MAX_NESTING_DEPTH).replace('"revision":1', '"revision":2') });
    expect(updated.status).toBe(200);
    const patches: [string, string][] = [
      [MERGE, `{"data":${nested(MAX_NESTING_DEPTH - 1)}}`],
      [SMP, `{"data":${nested(MAX_NESTING_DEPTH - 1)}}`],
      // data is immutable: the replacement rebuilds the same value, one level down.
      [JSON_PATCH, `[{"op":"replace","path":"/data/a","value":${nested(MAX_NESTING_DEPTH - 2)}}]`],
    ];
    for (const [contentType, body] of patches) {
      const r = await raw(s, 'PATCH', `${CR}/${name}`, { body, contentType });
      expect([contentType, r.status]).toEqual([contentType, 200]);
    }
    const applied = await raw(s, 'PATCH', `${CR}/${name}?fieldManager=edge&force=true`, { body: revision(name, MAX_NESTING_DEPTH), contentType: APPLY });
    expect(applied.status).toBe(200);
    const got = await raw(s, 'GET', `${CR}/${name}`);
    expect(got.status).toBe(200);
  });
});
