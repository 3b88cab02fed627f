import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const NS = '/api/v1/namespaces';
const CM = `${NS}/default/configmaps`;

beforeAll(async () => {
  s = await startTestServer({ store: new MemoryStore({ historyLimit: 20 }), bookmarkIntervalMs: 100 });
});
afterAll(async () => {
  await s.close();
});

async function createCm(name: string, labels: Record<string, string> = {}): Promise<{ metadata: { resourceVersion: string } }> {
  const r = await raw(s, 'POST', CM, { body: { metadata: { name, labels }, data: { k: name } } });
  expect(r.status).toBe(201);
  return r.json;
}
const names = (list: { items: { metadata: { name: string } }[] }): string[] => list.items.map((i) => i.metadata.name);

describe('list', () => {
  it('paginates at the first page revision despite concurrent writes', async () => {
    await raw(s, 'POST', NS, { body: { metadata: { name: 'pages' } } });
    // Secrets: ConfigMaps would list the namespace's kube-root-ca.crt among the pages.
    const path = `${NS}/pages/secrets`;
    for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) await raw(s, 'POST', path, { body: { metadata: { name: n } } });
    const first = (await raw(s, 'GET', `${path}?limit=2`)).json;
    expect(names(first)).toEqual(['p1', 'p2']);
    expect(first.metadata.remainingItemCount).toBe(3);
    await raw(s, 'DELETE', `${path}/p4`);
    await raw(s, 'POST', path, { body: { metadata: { name: 'p6' } } });
    const second = (await raw(s, 'GET', `${path}?limit=2&continue=${first.metadata.continue}`)).json;
    expect(names(second)).toEqual(['p3', 'p4']);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const third = (await raw(s, 'GET', `${path}?limit=2&continue=${second.metadata.continue}`)).json;
    expect(names(third)).toEqual(['p5']);
    expect(third.metadata.continue).toBeUndefined();
  });

  it('filters by label and field selectors without remainingItemCount', async () => {
    await createCm('sel-a', { tier: 'web' });
    await createCm('sel-b', { tier: 'db' });
    await createCm('sel-c');
    const web = (await raw(s, 'GET', `${CM}?labelSelector=${encodeURIComponent('tier in (web,db)')}&limit=1`)).json;
    expect(names(web)).toEqual(['sel-a']);
    expect(web.metadata.remainingItemCount).toBeUndefined();
    expect(web.metadata.continue).toBeDefined();
    const notWeb = (await raw(s, 'GET', `${CM}?labelSelector=${encodeURIComponent('tier!=web')}`)).json;
    expect(names(notWeb)).toEqual(expect.arrayContaining(['sel-b', 'sel-c']));
    expect(names(notWeb)).not.toContain('sel-a');
    const byName = (await raw(s, 'GET', `${CM}?fieldSelector=metadata.name%3Dsel-c`)).json;
    expect(names(byName)).toEqual(['sel-c']);
    const bad = await raw(s, 'GET', `${CM}?fieldSelector=spec.foo%3Dx`);
    expect(bad.status).toBe(400);
    const badLabel = await raw(s, 'GET', `${CM}?labelSelector=${encodeURIComponent('a b')}`);
    expect(badLabel.status).toBe(400);
  });

  it('validates ListOptions and continue tokens', async () => {
    const r = await raw(s, 'GET', `${CM}?resourceVersionMatch=Exact`);
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const tok = await raw(s, 'GET', `${CM}?continue=garbage`);
    expect(tok.status).toBe(400);
    expect(tok.json.message).toMatch(/^invalid continue token: continue key is not valid: /);
    const both = await raw(s, 'GET', `${CM}?continue=x&resourceVersion=5`);
    expect(both.status).toBe(400);
  });

  it('reports the store revision and serves rv=0 without a limit', async () => {
    await createCm('rv0');
    const list = (await raw(s, 'GET', `${CM}?resourceVersion=0&limit=1`)).json;
    expect(list.items.length).toBeGreaterThan(1);
    expect(Number(list.metadata.resourceVersion)).toBe(s.store.currentRevision());
  });

  it('prints a Table with the kind columns', async () => {
    const r = await raw(s, 'GET', `${NS}/default/serviceaccounts`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    expect(r.json.kind).toBe('Table');
    expect(r.json.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Secrets', 'Age']);
    expect(r.json.rows[0].cells[0]).toBe('default');
    expect(r.json.rows[0].object.kind).toBe('PartialObjectMetadata');
    expect(r.json.metadata.resourceVersion).toMatch(/^\d+$/);
  });
});

describe('watch', () => {
  it('sends synthetic ADDED events then live ones, applying selectors to transitions', async () => {
    await createCm('w-in', { app: 'x' });
    const w = await openWatch(s, `${CM}?watch=true&labelSelector=app%3Dx`);
    expect(w.status).toBe(200);
    expect(w.headers['content-type']).toBe('application/json');
    await w.waitFor(1);
    const moved = await raw(s, 'PATCH', `${CM}/w-in`, { body: { metadata: { labels: { app: 'y' } } }, contentType: 'application/merge-patch+json' });
    await createCm('w-new', { app: 'x' });
    await raw(s, 'PATCH', `${CM}/w-in`, { body: { metadata: { labels: { app: 'x' } } }, contentType: 'application/merge-patch+json' });
    const events = await w.waitFor(4);
    w.close();
    expect(events.map((e) => `${e.type}:${e.object.metadata.name}`)).toEqual(['ADDED:w-in', 'DELETED:w-in', 'ADDED:w-new', 'ADDED:w-in']);
    expect(events[1].object.metadata.resourceVersion).toBe(moved.json.metadata.resourceVersion);
  });

  it('resumes after a resourceVersion and ends with 410 Expired when it is too old', async () => {
    const a = await createCm('r1');
    await createCm('r2');
    await raw(s, 'DELETE', `${CM}/r2`);
    const w = await openWatch(s, `${CM}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    const events = await w.waitFor(2);
    w.close();
    expect(events.map((e) => `${e.type}:${e.object.metadata.name}`)).toEqual(['ADDED:r2', 'DELETED:r2']);

    for (let i = 0; i < 25; i++) await createCm(`fill-${i}`);
    const old = await openWatch(s, `${CM}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    expect(old.status).toBe(200);
    await old.ended;
    expect(old.events).toHaveLength(1);
    expect(old.events[0].type).toBe('ERROR');
    expect(old.events[0].object).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(old.events[0].object.message).toMatch(new RegExp(`^too old resource version: ${a.metadata.resourceVersion} \\(\\d+\\)$`));
  });

  it("resumes a resource's watch from before the kept history while none of its own events is gone, as a watch cache per resource", async () => {
    const a = await createCm('quiet');
    // Other resources' writes, as a fleet's Lease renewals: more than the history keeps.
    for (let i = 0; i < 25; i++) expect((await raw(s, 'POST', `${NS}/default/secrets`, { body: { metadata: { name: `churn-${i}` } } })).status).toBe(201);
    const w = await openWatch(s, `${CM}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    expect(w.status).toBe(200);
    await createCm('after-churn');
    const events = await w.waitFor(1);
    w.close();
    expect(events.map((e) => `${e.type}:${e.object.metadata.name}`)).toEqual(['ADDED:after-churn']);

    // The Secrets' own history did lose events: a watch of them from there is 410.
    const secrets = await openWatch(s, `${NS}/default/secrets?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    await secrets.ended;
    expect(secrets.events.map((e) => [e.type, e.object.code])).toEqual([['ERROR', 410]]);
  });

  it('sends bookmarks and the initial-events-end bookmark on request', async () => {
    const w = await openWatch(
      s,
      `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dr1`,
    );
    const events = await w.waitFor(3);
    w.close();
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'r1' } } });
    expect(events[1]).toMatchObject({
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });
    expect(events[2].type).toBe('BOOKMARK');
  });

  it('ends the stream cleanly after timeoutSeconds', async () => {
    const w = await openWatch(s, `${CM}?watch=true&resourceVersion=${s.store.currentRevision()}&timeoutSeconds=1`);
    await w.ended;
    expect(w.events).toEqual([]);
  });

  it('rejects invalid watch options', async () => {
    const r = await raw(s, 'GET', `${CM}?watch=true&sendInitialEvents=true`);
    expect(r.status).toBe(422);
    expect(r.json.message).toContain('sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  });
});
