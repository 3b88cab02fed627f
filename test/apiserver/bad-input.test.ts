import { raw, type RawOptions } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'existing' } } });
});
afterAll(async () => {
  await s.close();
});

const SA = '/api/v1/namespaces/default/serviceaccounts';
const big = 'x'.repeat(3 * 1024 * 1024 + 10);

const cases: [string, string, string, RawOptions, number, string | RegExp][] = [
  ['malformed JSON', 'POST', SA, { body: '{"metadata":' }, 400, /^the object provided is unrecognized \(must be of type ServiceAccount\)/],
  ['oversized body', 'POST', SA, { body: big }, 413, 'Request entity too large: limit is 3145728'],
  ['wrong content type', 'POST', SA, { body: 'x', contentType: 'text/plain' }, 415, /^the body of the request was in an unknown format/],
  ['array body', 'POST', SA, { body: [] }, 400, /cannot be handled as a ServiceAccount/],
  ['wrong apiVersion', 'POST', SA, { body: { apiVersion: 'apps/v1', kind: 'ServiceAccount', metadata: { name: 'q' } } }, 400,
    'the API version in the data (apps/v1) does not match the expected API version (v1)'],
  ['wrong kind', 'POST', SA, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'q' } } }, 400, /cannot be handled as a ServiceAccount/],
  ['namespace mismatch', 'POST', SA, { body: { metadata: { name: 'q', namespace: 'kube-system' } } }, 400,
    'the namespace of the provided object does not match the namespace sent on the request'],
  ['name mismatch with URL', 'PUT', `${SA}/existing`, { body: { metadata: { name: 'other' } } }, 400,
    'the name of the object (other) does not match the name on the URL (existing)'],
  ['invalid name', 'POST', SA, { body: { metadata: { name: 'Bad_Name' } } }, 422, /^ServiceAccount "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/],
  ['missing name', 'POST', SA, { body: { metadata: {} } }, 422, 'ServiceAccount "" is invalid: metadata.name: Required value: name or generateName is required'],
  ['resourceVersion on create', 'POST', SA, { body: { metadata: { name: 'rv', resourceVersion: '5' } } }, 500, 'resourceVersion should not be set on objects to be created'],
  ['bad label selector', 'GET', `${SA}?labelSelector=a%20b`, {}, 400, /.+/],
  ['unknown resource', 'GET', '/api/v1/namespaces/default/widgets', {}, 404, 'the server could not find the requested resource'],
  ['missing object', 'GET', `${SA}/nope`, {}, 404, 'serviceaccounts "nope" not found'],
  ['no credentials', 'GET', SA, { anonymous: true }, 401, 'Unauthorized'],
  ['unsupported patch type', 'PATCH', `${SA}/existing`, { body: '{}', contentType: 'application/foo' }, 415, /^the body of the request was in an unknown format/],
  ['bad includeObject', 'GET', `${SA}?includeObject=x`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } }, 400,
    'unrecognized includeObject value: "x"'],
  ['strict duplicate field', 'POST', `${SA}?fieldValidation=Strict`, { body: '{"metadata":{"name":"d","name":"d"}}' }, 400,
    'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: strict decoding error: duplicate field "metadata.name"'],
  ['bad fieldValidation', 'POST', `${SA}?fieldValidation=Loose`, { body: { metadata: { name: 'fv' } } }, 422,
    'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"'],
  ['verb not supported', 'DELETE', '/api/v1/namespaces', {}, 405, 'deletecollection is not supported on resources of kind "namespaces"'],
];

describe('bad input is rejected with a Status and changes nothing', () => {
  it.each(cases)('%s', async (_name, method, path, opts, code, message) => {
    const before = s.store.currentRevision();
    const r = await raw(s, method, path, opts);
    expect(r.status).toBe(code);
    if (code >= 400) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code });
      if (typeof message === 'string') expect(r.json.message).toBe(message);
      else expect(r.json.message).toMatch(message);
    }
    expect(s.store.currentRevision()).toBe(before);
  });

  it('warns about duplicate fields by default and drops nothing else', async () => {
    const r = await raw(s, 'POST', SA, { body: '{"metadata":{"name":"warned","name":"warned"}}' });
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBe('299 - "duplicate field \\"metadata.name\\""');
  });

  it('serves health endpoints without credentials', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await raw(s, 'GET', p, { anonymous: true });
      expect(r.status).toBe(200);
      expect(r.text).toBe('ok');
    }
  });
});
