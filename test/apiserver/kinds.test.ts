import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const KINDS: [string, string, Record<string, unknown>][] = [
  ['/api/v1/namespaces/default/serviceaccounts', 'ServiceAccount', {}],
  ['/api/v1/namespaces/default/secrets', 'Secret', { data: { a: 'YQ==' } }],
  ['/api/v1/namespaces/default/configmaps', 'ConfigMap', { data: { a: 'b' } }],
  ['/api/v1/namespaces/default/pods', 'Pod', { spec: { containers: [{ name: 'c', image: 'busybox' }] } }],
  ['/api/v1/nodes', 'Node', {}],
  ['/api/v1/namespaces/default/events', 'Event', { involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R' }],
  ['/apis/events.k8s.io/v1/namespaces/default/events', 'Event', { type: 'Normal', reason: 'R', action: 'A', eventTime: '2024-05-01T10:00:00.000000Z', reportingController: 'x', reportingInstance: 'y' }],
  ['/apis/coordination.k8s.io/v1/namespaces/default/leases', 'Lease', { spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }],
  ['/apis/apps/v1/namespaces/default/controllerrevisions', 'ControllerRevision', { revision: 1, data: { x: 1 } }],
  ['/api/v1/namespaces', 'Namespace', {}],
];

describe.each(KINDS)('%s', (path, kind, extra) => {
  it('supports create, get, list, update and delete', async () => {
    const name = `k-${kind.toLowerCase()}`;
    const c = await raw(s, 'POST', path, { body: { metadata: { name }, ...extra } });
    expect(c.status).toBe(201);
    expect(c.json.kind).toBe(kind);
    expect((await raw(s, 'GET', `${path}/${name}`)).json.metadata.uid).toBe(c.json.metadata.uid);
    const list = await raw(s, 'GET', path);
    expect(list.json.kind).toBe(`${kind}List`);
    expect(list.json.items.some((i: { metadata: { name: string } }) => i.metadata.name === name)).toBe(true);
    const u = await raw(s, 'PUT', `${path}/${name}`, { body: { ...c.json, metadata: { ...c.json.metadata, labels: { u: '1' } } } });
    expect(u.status).toBe(200);
    // SetDefaults_Namespace puts the name label back on every write.
    expect(u.json.metadata.labels).toEqual(kind === 'Namespace' ? { u: '1', 'kubernetes.io/metadata.name': name } : { u: '1' });
    const table = await raw(s, 'GET', `${path}/${name}`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expect(table.json.rows).toHaveLength(1);
    if (kind === 'Namespace') {
      // Upstream keeps a deleted namespace Terminating until its contents are gone.
      const w = await openWatch(s, `${path}?watch=1&fieldSelector=metadata.name=${name}&resourceVersion=${u.json.metadata.resourceVersion}`);
      const d = await raw(s, 'DELETE', `${path}/${name}`);
      expect(d.status).toBe(200);
      expect(d.json).toMatchObject({ kind, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } });
      expect(d.json.metadata.deletionTimestamp).toEqual(expect.any(String));
      const events = await w.waitFor(3);
      w.close();
      expect(events.map((e: { type: string }) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'DELETED']);
      expect(events[2].object.spec.finalizers).toEqual([]);
    } else {
      const d = await raw(s, 'DELETE', `${path}/${name}`);
      expect(d.status).toBe(200);
    }
    expect((await raw(s, 'GET', `${path}/${name}`)).status).toBe(404);
  });
});

describe('per-kind rules', () => {
  const SECRETS = '/api/v1/namespaces/default/secrets';
  it('Secret: stringData folds into data, type defaults and is immutable, bad base64 is 400', async () => {
    const c = await raw(s, 'POST', SECRETS, { body: { metadata: { name: 'sd' }, stringData: { u: 'hi' } } });
    expect(c.json).toMatchObject({ type: 'Opaque', data: { u: 'aGk=' } });
    expect(c.json.stringData).toBeUndefined();
    const t = await raw(s, 'PUT', `${SECRETS}/sd`, { body: { ...c.json, type: 'other' } });
    expect(t.status).toBe(422);
    expect(t.json.message).toBe('Secret "sd" is invalid: type: Invalid value: "other": field is immutable');
    const b = await raw(s, 'POST', SECRETS, { body: { metadata: { name: 'b64' }, data: { a: 'not base64!' } } });
    expect(b.status).toBe(400);
  });

  it('ControllerRevision: data is immutable, revision may change but not below 0', async () => {
    const p = '/apis/apps/v1/namespaces/default/controllerrevisions';
    const c = await raw(s, 'POST', p, { body: { metadata: { name: 'cr' }, revision: 1, data: { a: 1 } } });
    const rev = await raw(s, 'PUT', `${p}/cr`, { body: { ...c.json, revision: 2 } });
    expect(rev.status).toBe(200);
    const data = await raw(s, 'PUT', `${p}/cr`, { body: { ...rev.json, data: { a: 2 } } });
    expect(data.status).toBe(422);
    expect(data.json.message).toMatch(/^ControllerRevision.apps "cr" is invalid: data: Invalid value: .*: field is immutable$/);
    const neg = await raw(s, 'POST', p, { body: { metadata: { name: 'neg' }, revision: -1, data: {} } });
    expect(neg.json.message).toBe('ControllerRevision.apps "neg" is invalid: revision: Invalid value: -1: must be greater than or equal to 0');
    const missing = await raw(s, 'POST', p, { body: { metadata: { name: 'nodata' }, revision: 0 } });
    expect(missing.json.message).toBe('ControllerRevision.apps "nodata" is invalid: data: Required value: data is mandatory');
  });

  it('Lease: PUT creates a missing lease', async () => {
    const r = await raw(s, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/le', {
      body: { metadata: { name: 'le' }, spec: { holderIdentity: 'a' } },
    });
    expect(r.status).toBe(201);
  });

  it('Pod: serviceAccountName defaults to default; Namespace: gets a default ServiceAccount', async () => {
    const pod = await raw(s, 'POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] } } });
    expect(pod.json.spec.serviceAccountName).toBe('default');
    await raw(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'fresh' } } });
    expect((await raw(s, 'GET', '/api/v1/namespaces/fresh/serviceaccounts/default')).status).toBe(200);
    const bad = await raw(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'a.b' } } });
    expect(bad.status).toBe(422);
    const w = await openWatch(s, '/api/v1/namespaces/fresh/serviceaccounts?watch=1&resourceVersion=0');
    await w.waitFor(1);
    await raw(s, 'DELETE', '/api/v1/namespaces/fresh');
    // The namespace's contents go with it, after the delete answered.
    expect((await w.waitFor(2))[1]).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'default' } } });
    w.close();
    expect((await raw(s, 'GET', '/api/v1/namespaces/fresh/serviceaccounts/default')).status).toBe(404);
  });
});
