import { ApiError } from '../../src/apiserver/http/errors.js';
import { decodeProtobufObject, messageFor } from '../../src/apiserver/codec/protobuf.js';
import { CORE_MESSAGES } from '../../src/apiserver/codec/protobuf-core.js';
import { GROUP_MESSAGES } from '../../src/apiserver/codec/protobuf-groups.js';
import { POD_MESSAGES } from '../../src/apiserver/codec/protobuf-pod.js';
import { META_MESSAGES, WRAPPERS, type MessageDesc } from '../../src/apiserver/codec/protobuf-schema.js';
import { RESOURCES } from '../../src/api/resources.js';
import { describeWithFixtures, fixtureFiles, readFixture, readFixtureJson } from '../helpers/fixtures.js';

const TABLES: Record<string, MessageDesc> = { ...META_MESSAGES, ...CORE_MESSAGES, ...POD_MESSAGES, ...GROUP_MESSAGES };

function gvkOf(file: string): { group: string; version: string; kind: string } {
  const parts = file.replace(/\.pb$/, '').split('.');
  const kind = parts.pop() ?? '';
  const version = parts.pop() ?? '';
  const group = parts.join('.');
  return { group: group === 'core' ? '' : group, version, kind };
}

/** The fixture restricted to the fields our tables know (only Pod's tables are a subset). */
function project(type: string, json: unknown): unknown {
  const desc = TABLES[type];
  if (!desc || Object.hasOwn(WRAPPERS, type) || typeof json !== 'object' || json === null) return json;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) {
    const f = desc[k];
    if (!f) continue;
    const [, t, flag] = f;
    if (flag === 'r') out[k] = (v as unknown[]).map((x) => project(t, x));
    else if (flag === 'm') out[k] = Object.fromEntries(Object.entries(v as object).map(([mk, mv]) => [mk, project(t, mv)]));
    else out[k] = project(t, v);
  }
  return out;
}

const pbFiles = fixtureFiles('.pb');

describeWithFixtures('protobuf decoding of the golden fixtures', () => {
  it('finds a fixture for every protobuf kind we serve', () => {
    expect(pbFiles.length).toBeGreaterThanOrEqual(20);
  });

  it.each(pbFiles)('%s decodes to its JSON twin', (file) => {
    const gvk = gvkOf(file);
    const decoded = decodeProtobufObject(readFixture(file), gvk);
    const json = readFixtureJson(file.replace(/\.pb$/, '.json'));
    if (gvk.kind === 'Pod') {
      const { apiVersion, kind, ...rest } = json;
      expect(decoded).toEqual({ apiVersion, kind, ...(project('Pod', rest) as object) });
      // The subset still covers the commonly used parts of a Pod.
      expect((decoded.spec as { containers: unknown[] }).containers).toHaveLength(1);
    } else {
      expect(decoded).toEqual(json);
    }
  });
});

it('has a protobuf decoder for every kind in RESOURCES and every subresource kind', () => {
  const missing = RESOURCES.flatMap((r) => [r, ...(r.subresources ?? [])])
    .filter((r) => !messageFor(r))
    .map((r) => `${r.group}/${r.version}/${r.kind}`);
  expect(missing).toEqual([]);
});

describeWithFixtures('protobuf decoding of what kubectl sends', () => {
  let sa: Buffer;
  beforeAll(() => {
    sa = readFixture('core.v1.ServiceAccount.pb');
  });
  const expected = { group: '', version: 'v1', kind: 'ServiceAccount' };

  function failure(body: Buffer, gvk = expected): ApiError {
    try {
      decodeProtobufObject(body, gvk);
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
    throw new Error('decoding succeeded');
  }

  it('keeps a pointer false (automountServiceAccountToken) and omits unset optionals', () => {
    // k8s\0 + Unknown{typeMeta{v1, ServiceAccount}, raw: ServiceAccount{metadata{name:"a"}, automount=false}}
    const raw = Buffer.from([0x0a, 0x03, 0x0a, 0x01, 0x61, 0x20, 0x00]);
    const typeMeta = Buffer.concat([Buffer.from([0x0a, 0x02]), Buffer.from('v1'), Buffer.from([0x12, 0x0e]), Buffer.from('ServiceAccount')]);
    const unknown = Buffer.concat([Buffer.from([0x0a, typeMeta.length]), typeMeta, Buffer.from([0x12, raw.length]), raw]);
    const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown]);
    expect(decodeProtobufObject(body, expected)).toEqual({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'a' },
      automountServiceAccountToken: false,
    });
  });

  it('rejects a body without the k8s magic with 400', () => {
    const e = failure(Buffer.from('{"kind":"ServiceAccount"}'));
    expect(e.code).toBe(400);
    expect(e.message).toContain('expected prefix [107 56 115 0]');
  });

  it('rejects truncated bodies with 400', () => {
    for (const cut of [5, 20, sa.length - 3]) expect(failure(sa.subarray(0, cut)).code).toBe(400);
  });

  it('rejects garbage after the magic with 400', () => {
    const garbage = Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x07])]);
    expect(failure(garbage).code).toBe(400);
  });

  it('answers 415 for a kind it cannot decode', () => {
    expect(failure(sa, { group: 'example.com', version: 'v1', kind: 'Widget' }).code).toBe(415);
  });

  it('rejects a body of another group-version with upstream text', () => {
    const e = failure(sa, { group: 'apps', version: 'v1', kind: 'ControllerRevision' });
    expect(e.code).toBe(400);
    expect(e.message).toBe('the API version in the data (v1) does not match the expected API version (apps/v1)');
  });

  it('rejects a body of another kind with 400', () => {
    expect(failure(sa, { group: '', version: 'v1', kind: 'Secret' }).code).toBe(400);
  });
});
