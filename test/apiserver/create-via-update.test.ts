/**
 * Objects created by an update (PUT to a kind that allows it, such as Leases) or by server-side apply get
 * the metadata a create gives them (kube-apiserver 1.37, kubernetes#138908): the same fields as a POST.
 * A `metadata.uid` in a PUT's body is a precondition, as upstream's: such a create is refused.
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

it('refuses a PUT whose metadata.uid the object does not have, missing or stored, with upstream 409', async () => {
  const uid = '6f1c3a52-0d6e-4a8e-9a9e-1b2c3d4e5f60';
  const refusal = (name: string, stored = ''): string =>
    `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": StorageError: invalid object, Code: 4, ` +
    `Key: /registry/leases/default/${name}, ResourceVersion: 0, ` +
    `AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: ${stored}`;
  const missing = await raw(srv, 'PUT', `${LEASES}/with-uid`, { body: lease('with-uid', { uid }) });
  expect([missing.status, missing.json.reason, missing.json.message]).toEqual([409, 'Conflict', refusal('with-uid')]);
  expect((await raw(srv, 'GET', `${LEASES}/with-uid`)).status).toBe(404);

  const stored = (await raw(srv, 'PUT', `${LEASES}/with-uid`, { body: lease('with-uid') })).json.metadata.uid;
  const other = await raw(srv, 'PUT', `${LEASES}/with-uid`, { body: lease('with-uid', { uid }) });
  expect([other.status, other.json.message]).toEqual([409, refusal('with-uid', stored)]);
  const same = await raw(srv, 'PUT', `${LEASES}/with-uid`, { body: { ...(lease('with-uid', { uid: stored }) as object), spec: { holderIdentity: 'you' } } });
  expect([same.status, same.json.spec.holderIdentity]).toEqual([200, 'you']);

  // A kind that does not create on update checks the precondition before finding the object missing, as upstream's storage.
  const cm = await raw(srv, 'PUT', '/api/v1/namespaces/default/configmaps/none', { body: { metadata: { name: 'none', uid } } });
  expect([cm.status, cm.json.message]).toEqual([
    409,
    `Operation cannot be fulfilled on configmaps "none": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/none, ` +
      `ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: `,
  ]);
});
