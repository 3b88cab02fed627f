import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import type { RangeOptions, RangeResult } from '../../src/apiserver/storage/store.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Counts the objects every range read hands back: what a list had to look at. */
class CountingStore extends MemoryStore {
  itemsRead = 0;
  override async range(options: RangeOptions): Promise<RangeResult> {
    const res = await super.range(options);
    this.itemsRead += res.items.length;
    return res;
  }
}

let s: TestServer;
const store = new CountingStore();
const NODES = '/api/v1/nodes';
const CM = '/api/v1/namespaces/default/configmaps';
const byName = (name: string): string => `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`;
const names = (list: { items: { metadata: { name: string } }[] }): string[] => list.items.map((i) => i.metadata.name);

beforeAll(async () => {
  s = await startTestServer({ store });
  // n1 prefixes the keys of n10…n19 and n100: a prefix scan would see them all.
  for (const n of ['n1', 'n2', 'n100', ...Array.from({ length: 10 }, (_, i) => `n1${i}`)]) {
    const r = await raw(s, 'POST', NODES, { body: { metadata: { name: n, labels: { tier: n === 'n1' ? 'a' : 'b' } } } });
    expect(r.status).toBe(201);
  }
});
afterAll(async () => {
  await s.close();
});

describe('a list whose field selector names one object (upstream MatchesSingle)', () => {
  it('reads that one key, not the collection', async () => {
    const before = store.itemsRead;
    const list = (await raw(s, 'GET', `${NODES}?${byName('n1')}`)).json;
    expect(names(list)).toEqual(['n1']);
    expect(Number(list.metadata.resourceVersion)).toBe(s.store.currentRevision());
    expect(store.itemsRead - before).toBe(1);
  });

  it('gives at most one item and never a continue token, whatever the limit', async () => {
    const list = (await raw(s, 'GET', `${NODES}?limit=1&${byName('n1')}`)).json;
    expect(names(list)).toEqual(['n1']);
    expect(list.metadata.continue).toBeUndefined();
    expect(list.metadata.remainingItemCount).toBeUndefined();
  });

  it('applies the rest of the selection to it', async () => {
    expect(names((await raw(s, 'GET', `${NODES}?${byName('n1')}&labelSelector=tier%3Da`)).json)).toEqual(['n1']);
    expect(names((await raw(s, 'GET', `${NODES}?${byName('n1')}&labelSelector=tier%3Db`)).json)).toEqual([]);
    const both = `fieldSelector=${encodeURIComponent('metadata.name=n1,metadata.name!=n1')}`;
    expect(names((await raw(s, 'GET', `${NODES}?${both}`)).json)).toEqual([]);
  });

  it('answers an empty list for a name nobody has, at the current revision', async () => {
    for (const name of ['n3', 'n', '']) {
      const list = (await raw(s, 'GET', `${NODES}?${byName(name)}`)).json;
      expect(list.items).toEqual([]);
      expect(Number(list.metadata.resourceVersion)).toBe(s.store.currentRevision());
    }
  });

  it('reads the object as it was at an exact resourceVersion', async () => {
    const created = (await raw(s, 'POST', CM, { body: { metadata: { name: 'then' }, data: { v: 'old' } } })).json;
    await raw(s, 'PATCH', `${CM}/then`, { body: { data: { v: 'new' } }, contentType: 'application/merge-patch+json' });
    const rv = created.metadata.resourceVersion;
    const then = (await raw(s, 'GET', `${CM}?resourceVersion=${rv}&resourceVersionMatch=Exact&${byName('then')}`)).json;
    expect(then.items.map((i: { data: { v: string } }) => i.data.v)).toEqual(['old']);
    expect(then.metadata.resourceVersion).toBe(rv);
    const now = (await raw(s, 'GET', `${CM}?${byName('then')}`)).json;
    expect(now.items.map((i: { data: { v: string } }) => i.data.v)).toEqual(['new']);
  });

  it('still lists across namespaces, where a name alone is no key', async () => {
    await raw(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'other' } } });
    await raw(s, 'POST', '/api/v1/namespaces/other/configmaps', { body: { metadata: { name: 'then' } } });
    const all = (await raw(s, 'GET', `/api/v1/configmaps?${byName('then')}`)).json;
    expect(all.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace).sort()).toEqual(['default', 'other']);
  });
});

describe('a GET of one object', () => {
  it('answers its field selector and resourceVersion as upstream', async () => {
    await raw(s, 'POST', CM, { body: { metadata: { name: 'one' }, data: { v: '1' } } });
    expect((await raw(s, 'GET', `${CM}/one?${byName('one')}`)).json.data).toEqual({ v: '1' });
    const other = await raw(s, 'GET', `${CM}/one?${byName('two')}`);
    expect(other.status).toBe(400);
    expect(other.json.message).toBe("fieldSelector metadata.name doesn't match requested name");
    const bad = await raw(s, 'GET', `${CM}/one?resourceVersion=abc`);
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('invalid resource version: "abc"');
    expect((await raw(s, 'GET', `${CM}/missing`)).status).toBe(404);
    // A resourceVersion the store has not reached yet is waited for, then the object is read.
    const next = s.store.currentRevision() + 1;
    const waiting = raw(s, 'GET', `${CM}/one?resourceVersion=${next}`);
    await new Promise((r) => setTimeout(r, 100));
    await raw(s, 'PATCH', `${CM}/one`, { body: { data: { v: '2' } }, contentType: 'application/merge-patch+json' });
    const read = await waiting;
    expect(read.status).toBe(200);
    expect(read.json.data).toEqual({ v: '2' });
    expect(Number(read.json.metadata.resourceVersion)).toBe(next);
  });
});
