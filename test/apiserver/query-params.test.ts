/**
 * Boolean and integer query parameters as kube-apiserver's parameter codec converts them
 * (apimachinery runtime Convert_Slice_string_To_bool / _int64), as the Python and Go clients send
 * them: the Python client's `watch=True` is a watch, not a list.
 */
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const SA = '/api/v1/namespaces/default/serviceaccounts';

beforeAll(async () => {
  s = await startTestServer();
  await raw(s, 'POST', SA, { body: { metadata: { name: 'q1' } } });
});
afterAll(async () => {
  await s.close();
});

describe('boolean query parameters', () => {
  it.each(['True', 'true', 'TRUE', '1', 'yes', ''])('watch=%s opens a watch stream', async (value) => {
    const w = await openWatch(s, `${SA}?watch=${value}&fieldSelector=metadata.name%3Dq1`);
    try {
      expect(w.status).toBe(200);
      const [first] = await w.waitFor(1);
      expect(first).toMatchObject({ type: 'ADDED', object: { kind: 'ServiceAccount', metadata: { name: 'q1' } } });
    } finally {
      w.close();
    }
  });

  it.each(['false', 'False', 'FALSE', '0'])('watch=%s lists', async (value) => {
    const r = await raw(s, 'GET', `${SA}?watch=${value}`);
    expect(r.status).toBe(200);
    expect(r.json.kind).toBe('ServiceAccountList');
  });

  it('allowWatchBookmarks=True and sendInitialEvents=True are booleans, not 400s', async () => {
    const w = await openWatch(
      s,
      `${SA}?watch=True&allowWatchBookmarks=True&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dq1`,
    );
    try {
      expect(w.status).toBe(200);
      const events = await w.waitFor(2);
      expect(events[0]).toMatchObject({ type: 'ADDED' });
      expect(events[1]).toMatchObject({ type: 'BOOKMARK' });
    } finally {
      w.close();
    }
  });

  it('sendInitialEvents=False on a list is still "set" (a pointer upstream) and forbidden', async () => {
    const r = await raw(s, 'GET', `${SA}?sendInitialEvents=False`);
    expect(r.status).toBe(422);
    expect(r.json.message).toBe('ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list');
  });

  it('force=False on a merge patch is present, hence forbidden; force=True applies over a conflict', async () => {
    const merge = await raw(s, 'PATCH', `${SA}/q1?force=False`, { body: {}, contentType: 'application/merge-patch+json' });
    expect(merge.status).toBe(422);
    expect(merge.json.message).toBe('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
    const apply = (manager: string, force: string): Promise<{ status: number }> =>
      raw(s, 'PATCH', `${SA}/applied?fieldManager=${manager}&force=${force}`, {
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'applied', labels: { owner: manager } } },
        contentType: 'application/apply-patch+yaml',
      });
    expect((await apply('a', 'False')).status).toBe(201);
    expect((await apply('b', 'false')).status).toBe(409);
    expect((await apply('b', 'True')).status).toBe(200);
  });

  it('pretty follows strconv.ParseBool: True indents, a malformed value does not', async () => {
    expect((await raw(s, 'GET', `${SA}/q1?pretty=True`)).text).toContain('\n  "kind"');
    expect((await raw(s, 'GET', `${SA}/q1?pretty=yes`)).text).not.toContain('\n  "');
  });

  it('orphanDependents=True in the query counts as set beside propagationPolicy', async () => {
    const r = await raw(s, 'DELETE', `${SA}/q1?orphanDependents=True&propagationPolicy=Background`);
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
    );
  });
});

describe('integer query parameters', () => {
  it.each([
    ['limit=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
    ['limit=', 'strconv.ParseInt: parsing "": invalid syntax'],
    ['limit=1.5', 'strconv.ParseInt: parsing "1.5": invalid syntax'],
    ['limit=99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
    ['watch=1&timeoutSeconds=soon', 'strconv.ParseInt: parsing "soon": invalid syntax'],
  ])('GET ?%s is a 400 with ParseInt\'s message', async (query, message) => {
    const r = await raw(s, 'GET', `${SA}?${query}`);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message });
  });

  it('DELETE ?gracePeriodSeconds=x is a 400 and deletes nothing', async () => {
    const r = await raw(s, 'DELETE', `${SA}/q1?gracePeriodSeconds=x`);
    expect(r.status).toBe(400);
    expect(r.json.message).toBe('strconv.ParseInt: parsing "x": invalid syntax');
    expect((await raw(s, 'GET', `${SA}/q1`)).status).toBe(200);
  });

  it('accepts a signed limit as ParseInt does', async () => {
    const r = await raw(s, 'GET', `${SA}?limit=%2B1`);
    expect(r.status).toBe(200);
    expect(r.json.items).toHaveLength(1);
  });
});
