/**
 * Concurrent PATCHes as kube-apiserver serves them: a patch that carries no resourceVersion is
 * re-applied to the latest object when another write got in first (GuaranteedUpdate), for all four
 * patch types; only a stale resourceVersion inside the patch (or an apply conflict) is a 409.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const SA = '/api/v1/namespaces/default/serviceaccounts';
const N = 30;

beforeAll(async () => {
  s = await startTestServer({ storage: 'sqlite' });
});
afterAll(async () => {
  await s.close();
});

async function createSa(name: string): Promise<void> {
  const r = await raw(s, 'POST', SA, { body: { metadata: { name, labels: { base: 'x' }, annotations: { base: 'x' } } } });
  expect(r.status).toBe(201);
}

const keys = Array.from({ length: N }, (_, i) => `k${i}`);

describe('concurrent patches without a resourceVersion all succeed', () => {
  it.each([
    ['merge', 'application/merge-patch+json', (k: string) => ({ metadata: { labels: { [k]: 'v' } } })],
    ['strategic merge', 'application/strategic-merge-patch+json', (k: string) => ({ metadata: { labels: { [k]: 'v' } } })],
    ['JSON', 'application/json-patch+json', (k: string) => [{ op: 'add', path: `/metadata/labels/${k}`, value: 'v' }]],
  ])('%s patch: %#', async (type, contentType, patch) => {
    const name = `many-${type.replace(' ', '-').toLowerCase()}`;
    await createSa(name);
    const results = await Promise.all(keys.map((k) => raw(s, 'PATCH', `${SA}/${name}`, { body: patch(k), contentType })));
    expect(results.map((r) => r.status)).toEqual(keys.map(() => 200));
    const labels = (await raw(s, 'GET', `${SA}/${name}`)).json.metadata.labels;
    expect(Object.keys(labels).sort()).toEqual(['base', ...keys].sort());
  });

  it('apply patch from 30 managers, each owning its own label', async () => {
    await createSa('many-apply');
    const results = await Promise.all(
      keys.map((k) =>
        raw(s, 'PATCH', `${SA}/many-apply?fieldManager=m-${k}`, {
          body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'many-apply', labels: { [k]: 'v' } } },
          contentType: 'application/apply-patch+yaml',
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(keys.map(() => 200));
    const got = (await raw(s, 'GET', `${SA}/many-apply`)).json.metadata;
    expect(Object.keys(got.labels).sort()).toEqual(['base', ...keys].sort());
    expect(got.managedFields.filter((m: { operation: string }) => m.operation === 'Apply')).toHaveLength(N);
  });
});

describe('only a stale resourceVersion in the patch is a conflict', () => {
  it('answers 409 to a patch carrying an old resourceVersion, and 200 to one carrying the current', async () => {
    await createSa('stale');
    const first = (await raw(s, 'GET', `${SA}/stale`)).json.metadata.resourceVersion as string;
    const moved = await raw(s, 'PATCH', `${SA}/stale`, { body: { metadata: { labels: { a: '1' } } }, contentType: 'application/merge-patch+json' });
    expect(moved.status).toBe(200);
    const stale = await raw(s, 'PATCH', `${SA}/stale`, {
      body: { metadata: { resourceVersion: first, labels: { b: '1' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({ reason: 'Conflict', message: expect.stringContaining('the object has been modified') });
    const current = await raw(s, 'PATCH', `${SA}/stale`, {
      body: { metadata: { resourceVersion: moved.json.metadata.resourceVersion, labels: { b: '1' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(current.status).toBe(200);
  });

  it('concurrent patches that all carry the same resourceVersion: one wins, the rest are 409', async () => {
    await createSa('same-rv');
    const rv = (await raw(s, 'GET', `${SA}/same-rv`)).json.metadata.resourceVersion as string;
    const results = await Promise.all(
      keys.slice(0, 10).map((k) =>
        raw(s, 'PATCH', `${SA}/same-rv`, { body: { metadata: { resourceVersion: rv, labels: { [k]: 'v' } } }, contentType: 'application/merge-patch+json' }),
      ),
    );
    const codes = results.map((r) => r.status).sort();
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(codes.filter((c) => c === 409)).toHaveLength(9);
  });
});

describe('PUT of a subresource', () => {
  const POD = '/api/v1/namespaces/default/pods/put-status';
  it('retries an unconditional /status PUT (no resourceVersion) as upstream does, and refuses a stale one with 409', async () => {
    const created = await raw(s, 'POST', '/api/v1/namespaces/default/pods', {
      body: { metadata: { name: 'put-status' }, spec: { containers: [{ name: 'c', image: 'busybox:1' }] } },
    });
    expect(created.status).toBe(201);
    const results = await Promise.all(
      keys.slice(0, 10).map((k) =>
        raw(s, 'PUT', `${POD}/status`, { body: { metadata: { name: 'put-status' }, spec: created.json.spec, status: { phase: 'Running', message: k } } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(keys.slice(0, 10).map(() => 200));
    const stale = await raw(s, 'PUT', `${POD}/status`, {
      body: { metadata: { name: 'put-status', resourceVersion: created.json.metadata.resourceVersion }, spec: created.json.spec, status: { phase: 'Failed' } },
    });
    expect(stale.status).toBe(409);
  });
});
