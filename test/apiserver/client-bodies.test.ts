/**
 * Bodies and options as the Python and Go clients (and others) send them: charset parameters on
 * the Content-Type, `null` for absent fields, an empty `metadata: {}`, DeleteOptions in the body
 * of DELETE and deletecollection or in the query, and the fieldManager/fieldValidation spellings.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const SA = '/api/v1/namespaces/default/serviceaccounts';
const CM = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('content types with parameters', () => {
  it('accepts application/json; charset=utf-8 on create, update and delete, and a charset on patch types', async () => {
    const json = 'application/json; charset=utf-8';
    expect((await raw(s, 'POST', SA, { body: { metadata: { name: 'cs' } }, contentType: json })).status).toBe(201);
    expect((await raw(s, 'PUT', `${SA}/cs`, { body: { metadata: { name: 'cs', labels: { a: '1' } } }, contentType: json })).status).toBe(200);
    const merge = await raw(s, 'PATCH', `${SA}/cs`, { body: { metadata: { labels: { b: '2' } } }, contentType: 'application/merge-patch+json; charset=utf-8' });
    expect(merge.status).toBe(200);
    expect(merge.json.metadata.labels).toEqual({ a: '1', b: '2' });
    const del = await raw(s, 'DELETE', `${SA}/cs`, { body: { kind: 'DeleteOptions', apiVersion: 'v1' }, contentType: json });
    expect(del.status).toBe(200);
  });
});

describe('null and empty values', () => {
  it('treats null lists, maps and scalars as absent and never stores the nulls', async () => {
    const body = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'absent-fields', labels: null, annotations: null, ownerReferences: null, finalizers: null, generateName: null },
      secrets: null,
      imagePullSecrets: null,
      automountServiceAccountToken: null,
    };
    const r = await raw(s, 'POST', SA, { body });
    expect(r.status).toBe(201);
    const got = (await raw(s, 'GET', `${SA}/absent-fields`)).json;
    expect(JSON.stringify(got)).not.toContain(':null');
    expect(got.secrets).toBeUndefined();
    expect(got.metadata.labels).toBeUndefined();
  });

  it('takes the name from the URL when an update carries metadata: {}', async () => {
    await raw(s, 'POST', SA, { body: { metadata: { name: 'empty-meta' } } });
    const r = await raw(s, 'PUT', `${SA}/empty-meta`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: {} } });
    expect(r.status).toBe(200);
    expect(r.json.metadata.name).toBe('empty-meta');
  });

  it('treats a patch of metadata: {} as a no-op', async () => {
    const before = (await raw(s, 'GET', `${SA}/empty-meta`)).json.metadata.resourceVersion;
    for (const contentType of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
      const r = await raw(s, 'PATCH', `${SA}/empty-meta`, { body: { metadata: {} }, contentType });
      expect(r.status).toBe(200);
      expect(r.json.metadata.resourceVersion).toBe(before);
    }
  });

  it('a ConfigMap with data: null is a ConfigMap without data', async () => {
    const r = await raw(s, 'POST', CM, { body: { metadata: { name: 'nodata' }, data: null, binaryData: null } });
    expect(r.status).toBe(201);
    expect(r.json.data).toBeUndefined();
  });
});

describe('DeleteOptions in the body or the query', () => {
  it('takes propagationPolicy from the body or from the query', async () => {
    for (const name of ['by-body', 'by-query']) await raw(s, 'POST', SA, { body: { metadata: { name } } });
    const body = await raw(s, 'DELETE', `${SA}/by-body`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' } });
    expect(body.status).toBe(200);
    const query = await raw(s, 'DELETE', `${SA}/by-query?propagationPolicy=Foreground`);
    expect(query.status).toBe(200);
    const bad = await raw(s, 'DELETE', `${SA}/x`, { body: { propagationPolicy: 'Sideways' } });
    expect(bad.status).toBe(422);
    expect(bad.json.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
  });

  it('reads null fields in a DeleteOptions body as absent (gracePeriodSeconds, preconditions, dryRun)', async () => {
    await raw(s, 'POST', SA, { body: { metadata: { name: 'null-opts' } } });
    const r = await raw(s, 'DELETE', `${SA}/null-opts`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: null, preconditions: null, dryRun: null, propagationPolicy: null, orphanDependents: null },
    });
    expect(r.status).toBe(200);
    expect((await raw(s, 'GET', `${SA}/null-opts`)).status).toBe(404);
  });

  it('a DeleteOptions body with a wrongly typed field is a 400 naming it', async () => {
    const r = await raw(s, 'DELETE', `${SA}/x`, { body: { gracePeriodSeconds: 'soon' } });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe(
      'DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    );
  });

  it('honours a DeleteOptions body on deletecollection (dryRun deletes nothing)', async () => {
    for (const name of ['dc-1', 'dc-2']) await raw(s, 'POST', SA, { body: { metadata: { name, labels: { set: 'dc' } } } });
    const dry = await raw(s, 'DELETE', `${SA}?labelSelector=set%3Ddc`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'], propagationPolicy: 'Background' } });
    expect(dry.status).toBe(200);
    expect(dry.json.items).toHaveLength(2);
    expect((await raw(s, 'GET', `${SA}?labelSelector=set%3Ddc`)).json.items).toHaveLength(2);
    const real = await raw(s, 'DELETE', `${SA}?labelSelector=set%3Ddc`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' } });
    expect(real.status).toBe(200);
    expect((await raw(s, 'GET', `${SA}?labelSelector=set%3Ddc`)).json.items).toHaveLength(0);
  });

  it('ignores the query when the body carries DeleteOptions, as upstream does', async () => {
    await raw(s, 'POST', SA, { body: { metadata: { name: 'body-wins' } } });
    const r = await raw(s, 'DELETE', `${SA}/body-wins?dryRun=All`, { body: { kind: 'DeleteOptions', apiVersion: 'v1' } });
    expect(r.status).toBe(200);
    expect((await raw(s, 'GET', `${SA}/body-wins`)).status).toBe(404);
  });
});

describe('fieldManager and fieldValidation as clients spell them', () => {
  it('records the fieldManager the client names', async () => {
    const r = await raw(s, 'POST', `${SA}?fieldManager=python-client`, { body: { metadata: { name: 'managed', labels: { a: '1' } } } });
    expect(r.status).toBe(201);
    expect(r.json.metadata.managedFields[0]).toMatchObject({ manager: 'python-client', operation: 'Update' });
  });

  it.each([
    ['Strict', 400],
    ['Warn', 201],
    ['Ignore', 201],
    ['', 201],
  ])('fieldValidation=%s on an unknown field answers %d', async (mode, code) => {
    const r = await raw(s, 'POST', `${SA}?fieldValidation=${mode}`, { body: { metadata: { name: `fv-${mode.toLowerCase() || 'default'}` }, bogus: 1 } });
    expect(r.status).toBe(code);
    if (code === 400) expect(r.json.message).toContain('strict decoding error: unknown field "bogus"');
    if (mode === 'Warn' || mode === '') expect(r.headers.warning).toBe('299 - "unknown field \\"bogus\\""');
  });

  it('refuses other spellings of fieldValidation with upstream\'s 422 (the values are case-sensitive)', async () => {
    const r = await raw(s, 'POST', `${SA}?fieldValidation=strict`, { body: { metadata: { name: 'fv-lower' } } });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"',
    );
  });
});
