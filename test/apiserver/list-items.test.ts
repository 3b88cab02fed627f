/**
 * List responses as kube-apiserver encodes its typed lists: the items carry no kind or apiVersion
 * (their TypeMeta is empty; the list's kind says what they are), in compact, pretty and YAML output
 * and in a DeleteCollection's list, while a GET of one object and a watch event's object keep them.
 */
import { parse } from 'yaml';
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const CM = '/api/v1/namespaces/default/configmaps';
beforeAll(async () => {
  s = await startTestServer();
  // Type fields first (as clients send them), last, between other fields, and absent from the body.
  const bodies = [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'li-first', labels: { t: 'li' } }, data: { a: '1' } },
    { metadata: { name: 'li-last', labels: { t: 'li' } }, data: { a: '1' }, apiVersion: 'v1', kind: 'ConfigMap' },
    { metadata: { name: 'li-between', labels: { t: 'li' } }, kind: 'ConfigMap', data: { a: '1' }, apiVersion: 'v1' },
    { metadata: { name: 'li-untyped', labels: { t: 'li' } }, data: { a: '1' } },
  ];
  for (const body of bodies) expect((await raw(s, 'POST', CM, { body })).status).toBe(201);
});
afterAll(() => s.close());

const SELECTED = `${CM}?labelSelector=t%3Dli`;
type Item = Record<string, unknown> & { metadata: { name: string } };
const typeFields = (items: Item[]): [string, unknown, unknown][] => items.map((i) => [i.metadata.name, i.kind, i.apiVersion]);
const NONE: [string, unknown, unknown][] = ['li-between', 'li-first', 'li-last', 'li-untyped'].map((n) => [n, undefined, undefined]);

it('leaves kind and apiVersion off every item of a list, compact or pretty', async () => {
  for (const path of [SELECTED, `${SELECTED}&pretty=true`]) {
    const res = await raw(s, 'GET', path);
    expect([res.json.kind, res.json.apiVersion]).toEqual(['ConfigMapList', 'v1']);
    expect(typeFields(res.json.items)).toEqual(NONE);
    expect(res.json.items.map((i: Item) => i.data)).toEqual(NONE.map(() => ({ a: '1' })));
  }
});

it('leaves them off in YAML too', async () => {
  const res = await raw(s, 'GET', SELECTED, { headers: { Accept: 'application/yaml' } });
  expect(res.status).toBe(200);
  const list = parse(res.text) as { kind: string; items: Item[] };
  expect(list.kind).toBe('ConfigMapList');
  expect(typeFields(list.items)).toEqual(NONE);
});

it('keeps them on a single object and on the objects of watch events', async () => {
  const one = await raw(s, 'GET', `${CM}/li-last`);
  expect([one.json.kind, one.json.apiVersion]).toEqual(['ConfigMap', 'v1']);
  const w = await openWatch(s, `${SELECTED}&watch=true`);
  const events = await w.waitFor(4);
  w.close();
  expect(events.map((e) => [e.object.kind, e.object.apiVersion])).toEqual(NONE.map(() => ['ConfigMap', 'v1']));
});

it("leaves them off the items of a DeleteCollection's answer", async () => {
  const res = await raw(s, 'DELETE', SELECTED);
  expect(res.json.kind).toBe('ConfigMapList');
  expect(typeFields(res.json.items)).toEqual(NONE);
});
