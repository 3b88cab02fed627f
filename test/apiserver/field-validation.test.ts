/**
 * fieldValidation against the OpenAPI schemas on the full server: Strict rejects unknown fields with
 * the decoder's message, Warn and Ignore store the object without them (Warn says so in a header).
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  bogus: 1,
  spec: { containers: [{ name: 'c', image: 'busybox', colour: 'red' }] },
});
const PODS = '/api/v1/namespaces/default/pods';

it('Strict (the default for kubectl) rejects unknown fields with their paths and stores nothing', async () => {
  const res = await raw(srv, 'POST', `${PODS}?fieldValidation=Strict`, { body: pod('strict') });
  expect(res.status).toBe(400);
  expect(res.json?.message).toBe(
    'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "bogus", unknown field "spec.containers[0].colour"',
  );
  expect((await raw(srv, 'GET', `${PODS}/strict`)).status).toBe(404);
});

it('Warn stores the object without the unknown fields and returns Warning headers', async () => {
  const res = await raw(srv, 'POST', `${PODS}?fieldValidation=Warn`, { body: pod('warn') });
  expect(res.status).toBe(201);
  expect(String(res.headers.warning)).toContain('unknown field \\"spec.containers[0].colour\\"');
  const stored = (await raw(srv, 'GET', `${PODS}/warn`)).json as { bogus?: unknown; spec: { containers: Record<string, unknown>[] } };
  expect(stored.bogus).toBeUndefined();
  expect(stored.spec.containers[0]).not.toHaveProperty('colour');
  expect(stored.spec.containers[0]?.image).toBe('busybox');
});

it('Ignore stores the object without the unknown fields, silently', async () => {
  const res = await raw(srv, 'POST', `${PODS}?fieldValidation=Ignore`, { body: pod('ignore') });
  expect(res.status).toBe(201);
  expect(res.headers.warning).toBeUndefined();
  const stored = (await raw(srv, 'GET', `${PODS}/ignore`)).json as { bogus?: unknown; spec: { containers: Record<string, unknown>[] } };
  expect(stored.bogus).toBeUndefined();
  expect(stored.spec.containers[0]).not.toHaveProperty('colour');
});

describe('fields no schema declares, whatever their names', () => {
  const CM = '/api/v1/namespaces/default/configmaps';

  it('Strict names fields called after Object.prototype members, which a plain lookup would take for declared ones', async () => {
    const body = '{"metadata":{"name":"proto","toString":"x"},"constructor":1,"__proto__":{"a":1},"data":{"k":"v"}}';
    const res = await raw(srv, 'POST', `${CM}?fieldValidation=Strict`, { body });
    expect(res.status).toBe(400);
    expect(res.json?.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.toString", unknown field "constructor", unknown field "__proto__"',
    );
  });

  it('Warn and Ignore store none of them, a name with a dot or a bracket included', async () => {
    for (const mode of ['Warn', 'Ignore']) {
      const name = `odd-${mode.toLowerCase()}`;
      const body = `{"metadata":{"name":"${name}","toString":"x"},"constructor":1,"a.b":2,"c[0]":3,"data":{"k":"v"}}`;
      const res = await raw(srv, 'POST', `${CM}?fieldValidation=${mode}`, { body });
      expect(res.status).toBe(201);
      const stored = (await raw(srv, 'GET', `${CM}/${name}`)).json as Record<string, unknown> & { metadata: Record<string, unknown> };
      expect(Object.keys(stored).sort()).toEqual(['apiVersion', 'data', 'kind', 'metadata']);
      expect(Object.hasOwn(stored.metadata, 'toString')).toBe(false);
    }
  });
});
