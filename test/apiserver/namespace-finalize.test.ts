/**
 * The namespace `/finalize` subresource (upstream's FinalizeREST): PUT only, it changes
 * spec.finalizers (and metadata) but never status, validates finalizer names as core's
 * validateFinalizerName, and emptying spec.finalizers of a Terminating namespace deletes it
 * (ShouldDeleteNamespaceDuringUpdate), which is how users free a namespace stuck Terminating.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, manifest, type KubectlResult } from '../kubectl/kubectl.js';

let s: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;
beforeAll(async () => {
  s = await startTestServer();
  kubectl = kubectlFor(s);
});
afterAll(async () => {
  await s.close();
});

const NS = '/api/v1/namespaces';

async function createNamespace(name: string, finalizers?: string[]): Promise<Record<string, unknown>> {
  const r = await raw(s, 'POST', NS, { body: { metadata: { name }, ...(finalizers ? { spec: { finalizers } } : {}) } });
  expect(r.status).toBe(201);
  return r.json;
}

describe('namespaces/finalize', () => {
  it('is listed in discovery with the update verb only', async () => {
    const r = await raw(s, 'GET', '/api/v1');
    const entry = r.json.resources.find((x: { name: string }) => x.name === 'namespaces/finalize');
    expect(entry).toMatchObject({ name: 'namespaces/finalize', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['update'] });
  });

  it('changes spec.finalizers but never status, and leaves an Active namespace in place', async () => {
    const ns = await createNamespace('fin-active', ['example.com/x']);
    const r = await raw(s, 'PUT', `${NS}/fin-active/finalize`, {
      body: { ...ns, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } },
    });
    expect(r.status).toBe(200);
    expect(r.json.spec.finalizers).toEqual(['kubernetes']);
    expect(r.json.status).toEqual({ phase: 'Active' });
    expect((await raw(s, 'GET', `${NS}/fin-active`)).json.spec.finalizers).toEqual(['kubernetes']);
  });

  it('refuses finalizer names that are neither standard nor qualified (422) and any verb but PUT (405)', async () => {
    const ns = await createNamespace('fin-bad');
    const r = await raw(s, 'PUT', `${NS}/fin-bad/finalize`, { body: { ...ns, spec: { finalizers: ['kubernetes', 'custom'] } } });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe('Namespace "fin-bad" is invalid: spec.finalizers[1]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified');
    const patch = await raw(s, 'PATCH', `${NS}/fin-bad/finalize`, { body: { spec: { finalizers: [] } }, contentType: 'application/merge-patch+json' });
    expect(patch.status).toBe(405);
  });

  it('an update of a Terminating namespace whose spec finalizers remain does not delete it', async () => {
    await createNamespace('fin-held', ['example.com/x']);
    expect((await raw(s, 'DELETE', `${NS}/fin-held`)).status).toBe(200);
    const labelled = await raw(s, 'PATCH', `${NS}/fin-held`, { body: { metadata: { labels: { a: 'b' } } }, contentType: 'application/merge-patch+json' });
    expect(labelled.status).toBe(200);
    const cur = await raw(s, 'GET', `${NS}/fin-held`);
    expect(cur.status).toBe(200);
    expect(cur.json.status.phase).toBe('Terminating');
  });

  it('frees a namespace stuck Terminating: kubectl replace --raw .../finalize with no finalizers deletes it', async () => {
    await createNamespace('fin-stuck', ['example.com/x']);
    expect((await raw(s, 'DELETE', `${NS}/fin-stuck`)).status).toBe(200);
    // The in-server namespace controller drops `kubernetes`; example.com/x keeps it Terminating.
    for (let i = 0; i < 100; i++) {
      if ((await raw(s, 'GET', `${NS}/fin-stuck`)).json.spec.finalizers.length === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const stuck = (await raw(s, 'GET', `${NS}/fin-stuck`)).json;
    expect([stuck.status.phase, stuck.spec.finalizers]).toEqual(['Terminating', ['example.com/x']]);
    const file = manifest(s, 'fin-stuck.json', { ...stuck, spec: { finalizers: [] } });
    const r = await kubectl('replace', '--raw', '/api/v1/namespaces/fin-stuck/finalize', '-f', file);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect((await raw(s, 'GET', `${NS}/fin-stuck`)).status).toBe(404);
  });
});
