import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const SA = '/api/v1/namespaces/default/serviceaccounts';

async function revision(): Promise<number> {
  return s.store.currentRevision();
}

describe('create/update/delete semantics', () => {
  it('returns 201 with server-set metadata and 409 AlreadyExists on a duplicate', async () => {
    const r = await raw(s, 'POST', SA, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a1', uid: 'mine', labels: { a: 'b' } } } });
    expect(r.status).toBe(201);
    expect(r.json.metadata.uid).not.toBe('mine');
    expect(r.json.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(r.json.metadata.managedFields[0]).toMatchObject({ operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1' });
    const dup = await raw(s, 'POST', SA, { body: { metadata: { name: 'a1' } } });
    expect(dup.status).toBe(409);
    expect(dup.json).toMatchObject({ reason: 'AlreadyExists', message: 'serviceaccounts "a1" already exists', details: { name: 'a1', kind: 'serviceaccounts' } });
  });

  it('generates names from generateName', async () => {
    const r = await raw(s, 'POST', SA, { body: { metadata: { generateName: 'gen-' } } });
    expect(r.status).toBe(201);
    expect(r.json.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('rejects a stale update with 409 Conflict and accepts an unconditional one', async () => {
    const created = (await raw(s, 'POST', SA, { body: { metadata: { name: 'occ' } } })).json;
    const first = await raw(s, 'PUT', `${SA}/occ`, { body: { ...created, metadata: { ...created.metadata, labels: { v: '1' } } } });
    expect(first.status).toBe(200);
    const stale = await raw(s, 'PUT', `${SA}/occ`, { body: { ...created, metadata: { ...created.metadata, labels: { v: '2' } } } });
    expect(stale.status).toBe(409);
    expect(stale.json.message).toBe(
      'Operation cannot be fulfilled on serviceaccounts "occ": the object has been modified; please apply your changes to the latest version and try again',
    );
    const uncond = await raw(s, 'PUT', `${SA}/occ`, { body: { metadata: { name: 'occ', labels: { v: '3' } } } });
    expect(uncond.status).toBe(200);
    expect(uncond.json.metadata.uid).toBe(created.metadata.uid);
    expect(uncond.json.metadata.labels).toEqual({ v: '3' });
  });

  it('writes nothing for an update that differs only in resourceVersion and managedFields, and writes a nested change', async () => {
    const created = (await raw(s, 'POST', SA, { body: { metadata: { name: 'noop', labels: { a: 'b' } }, secrets: [{ name: 's1' }] } })).json;
    const before = await revision();
    const same = await raw(s, 'PUT', `${SA}/noop`, { body: { ...created, metadata: { ...created.metadata, resourceVersion: undefined, managedFields: undefined } } });
    expect(same.status).toBe(200);
    expect(same.json.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(await revision()).toBe(before);
    const nested = await raw(s, 'PUT', `${SA}/noop`, { body: { ...created, secrets: [{ name: 's2' }] } });
    expect(nested.status).toBe(200);
    expect(nested.json.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    expect(await revision()).toBe(before + 1);
  });

  it('lands concurrent unconditional updates, each answered with its own body after lost races are retried', async () => {
    // On SQLite a write waits for its group's commit, so updates arriving meanwhile lose their compare-and-swap.
    const sq = await startTestServer({ storage: 'sqlite' });
    try {
      await racingUpdates(sq);
    } finally {
      await sq.close();
    }
  });

  async function racingUpdates(s: TestServer): Promise<void> {
    const created = (await raw(s, 'POST', SA, { body: { metadata: { name: 'race', labels: { v: '0' } } } })).json;
    // Fired together, they race for the same revision: the losers are retried against the winner's
    // object, each from its own body as sent, which a retry must not have lost.
    const puts = await Promise.all(
      Array.from({ length: 16 }, (_, i) => raw(s, 'PUT', `${SA}/race`, { body: { metadata: { name: 'race', labels: { v: String(i + 1), [`only${i}`]: 'x' } } } })),
    );
    const revisions = new Set<string>();
    puts.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect(r.json.metadata.labels).toEqual({ v: String(i + 1), [`only${i}`]: 'x' });
      expect(r.json.metadata.uid).toBe(created.metadata.uid);
      revisions.add(r.json.metadata.resourceVersion as string);
    });
    // Every update was written, none folded into another.
    expect(revisions.size).toBe(16);
    const now = (await raw(s, 'GET', `${SA}/race`)).json;
    expect(puts.map((r) => r.json.metadata.resourceVersion)).toContain(now.metadata.resourceVersion);
  }

  it('dry-run create and delete leave the store unchanged', async () => {
    const before = await revision();
    const dry = await raw(s, 'POST', `${SA}?dryRun=All`, { body: { metadata: { name: 'dry' } } });
    expect(dry.status).toBe(201);
    expect(dry.json.metadata.uid).toBeDefined();
    expect(dry.json.metadata.resourceVersion).toBeUndefined();
    expect((await raw(s, 'GET', `${SA}/dry`)).status).toBe(404);
    await raw(s, 'POST', SA, { body: { metadata: { name: 'keep' } } });
    const mid = await revision();
    const del = await raw(s, 'DELETE', `${SA}/keep?dryRun=All`);
    expect(del.status).toBe(200);
    expect((await raw(s, 'GET', `${SA}/keep`)).status).toBe(200);
    expect(await revision()).toBe(mid);
    expect(mid).toBe(before + 1);
    const bad = await raw(s, 'POST', `${SA}?dryRun=x`, { body: { metadata: { name: 'dry' } } });
    expect(bad.status).toBe(422);
    expect(bad.json.message).toBe('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"x"}: supported values: "All"');
  });

  it('keeps an object with finalizers until the last one is removed', async () => {
    await raw(s, 'POST', SA, { body: { metadata: { name: 'fin', finalizers: ['example.com/hold'] } } });
    const del = await raw(s, 'DELETE', `${SA}/fin`);
    expect(del.status).toBe(200);
    expect(del.json.kind).toBe('ServiceAccount');
    expect(del.json.metadata.deletionTimestamp).toBeDefined();
    const again = await raw(s, 'DELETE', `${SA}/fin`);
    expect(again.json.metadata.resourceVersion).toBe(del.json.metadata.resourceVersion);
    const add = await raw(s, 'PATCH', `${SA}/fin`, {
      body: { metadata: { finalizers: ['example.com/hold', 'example.com/more'] } },
      contentType: 'application/merge-patch+json',
    });
    expect(add.status).toBe(422);
    const clear = await raw(s, 'PATCH', `${SA}/fin`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    expect(clear.status).toBe(200);
    expect((await raw(s, 'GET', `${SA}/fin`)).status).toBe(404);
  });

  it('checks delete preconditions and answers the deleted ServiceAccount, as its upstream storage returns it', async () => {
    const c = (await raw(s, 'POST', SA, { body: { metadata: { name: 'pre' } } })).json;
    const wrong = await raw(s, 'DELETE', `${SA}/pre`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } } });
    expect([wrong.status, wrong.json.details]).toEqual([409, { name: 'pre', kind: 'ServiceAccount' }]);
    expect(wrong.json.message).toBe(
      `Operation cannot be fulfilled on ServiceAccount "pre": the UID in the precondition (nope) does not match the UID in record (${c.metadata.uid}). ` +
        'The object might have been deleted and then recreated',
    );
    const stale = await raw(s, 'DELETE', `${SA}/pre`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } } });
    expect([stale.status, stale.json.message]).toEqual([
      409,
      `Operation cannot be fulfilled on ServiceAccount "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${c.metadata.resourceVersion}). ` +
        'The object might have been modified',
    ]);
    const lease = await raw(s, 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', { body: { metadata: { name: 'pre' } } });
    const leaseWrong = await raw(s, 'DELETE', '/apis/coordination.k8s.io/v1/namespaces/default/leases/pre', { body: { preconditions: { uid: 'nope' } } });
    expect([leaseWrong.status, leaseWrong.json.message, leaseWrong.json.details]).toEqual([
      409,
      `Operation cannot be fulfilled on Lease.coordination.k8s.io "pre": the UID in the precondition (nope) does not match the UID in record (${lease.json.metadata.uid}). ` +
        'The object might have been deleted and then recreated',
      { name: 'pre', group: 'coordination.k8s.io', kind: 'Lease' },
    ]);
    const ok = await raw(s, 'DELETE', `${SA}/pre`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' } });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'pre', uid: c.metadata.uid } });
    const badPolicy = await raw(s, 'DELETE', `${SA}/x?propagationPolicy=Sideways`);
    expect(badPolicy.status).toBe(422);
  });

  it('deletes a collection by label selector', async () => {
    await raw(s, 'POST', SA, { body: { metadata: { name: 'dc1', labels: { batch: 'x' } } } });
    await raw(s, 'POST', SA, { body: { metadata: { name: 'dc2', labels: { batch: 'x' } } } });
    await raw(s, 'POST', SA, { body: { metadata: { name: 'dc3', labels: { batch: 'y' } } } });
    const r = await raw(s, 'DELETE', `${SA}?labelSelector=batch%3Dx`);
    expect(r.status).toBe(200);
    expect(r.json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort()).toEqual(['dc1', 'dc2']);
    expect((await raw(s, 'GET', `${SA}/dc3`)).status).toBe(200);
  });

  it('rejects creates in a missing namespace and deletion of system namespaces', async () => {
    const r = await raw(s, 'POST', '/api/v1/namespaces/nowhere/serviceaccounts', { body: { metadata: { name: 'x' } } });
    expect(r.status).toBe(404);
    expect(r.json.message).toBe('namespaces "nowhere" not found');
    const d = await raw(s, 'DELETE', '/api/v1/namespaces/kube-system');
    expect(d.status).toBe(403);
  });
});
