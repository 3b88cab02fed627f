/**
 * Objects created by an update (PUT to a kind that allows it, such as Leases) or by server-side apply get
 * the metadata a create gives them (kube-apiserver 1.37, kubernetes#138908): the same fields as a POST.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.close();
});

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const lease = (name: string, metadata: Record<string, unknown> = {}): unknown => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, ...metadata },
  spec: { holderIdentity: 'me', leaseDurationSeconds: 10 },
});

it('creates through PUT and apply with the metadata of a create', async () => {
  const posted = (await raw(srv, 'POST', LEASES, { body: lease('by-post') })).json.metadata;
  const put = await raw(srv, 'PUT', `${LEASES}/by-put`, { body: lease('by-put') });
  const applied = await raw(srv, 'PATCH', `${LEASES}/by-apply?fieldManager=test`, { body: lease('by-apply'), contentType: 'application/apply-patch+yaml' });
  for (const res of [put, applied]) {
    expect(res.status).toBe(201);
    const m = res.json.metadata;
    expect(Object.keys(m).filter((k) => k !== 'name' && k !== 'managedFields').sort()).toEqual(Object.keys(posted).filter((k) => k !== 'name' && k !== 'managedFields').sort());
    expect(m.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(m.creationTimestamp)).not.toBeNaN();
  }
});
