/**
 * Responses built from the stored objects' cached encodings (codec/json-responses.ts): GET, LIST and
 * watch bodies are exactly the compact JSON of what they carry in every representation, a new
 * version is served at once, and the watchers of one write share one encoding of it.
 */
import https from 'node:https';
import { jest } from '@jest/globals';
import { presenting, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const NS = 'encodings';
const CM = `/api/v1/namespaces/${NS}/configmaps`;

const ACCEPT = {
  json: 'application/json',
  partialV1: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
  partialV1beta1: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1',
  partialListV1: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
} as const;

beforeAll(async () => {
  s = await startTestServer();
  expect((await raw(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).toBe(201);
});
afterAll(async () => {
  await s.close();
});

/** The body is the compact JSON text of its own value, one line: what a fresh JSON.stringify gives. */
function expectCompact(text: string): void {
  expect(text).toBe(`${JSON.stringify(JSON.parse(text))}\n`);
}

async function get(path: string, accept: string): Promise<{ text: string; json: { kind: string; metadata: Record<string, unknown>; items?: { metadata: { name: string } }[]; data?: Record<string, string> } }> {
  const r = await raw(s, 'GET', path, { headers: { Accept: accept } });
  expect(r.status).toBe(200);
  expectCompact(r.text);
  return { text: r.text, json: r.json };
}

interface RawWatch {
  lines: string[];
  waitFor(n: number): Promise<void>;
  close(): void;
}

/** A watch whose event lines are kept as they arrived, byte for byte. */
function rawWatch(path: string, accept: string): Promise<RawWatch> {
  const who = presenting(s.admin);
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    let buffer = '';
    const waiters: (() => void)[] = [];
    const req = https.request(new URL(path, s.url), { headers: { ...who.headers, Accept: accept }, ca: s.caPem, ...who.tls }, (res) => {
      expect(res.statusCode).toBe(200);
      res.on('data', (c: Buffer) => {
        buffer += c.toString('utf8');
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          lines.push(buffer.slice(0, nl + 1));
          buffer = buffer.slice(nl + 1);
        }
        for (const w of waiters.splice(0)) w();
      });
      resolve({
        lines,
        waitFor: (n) =>
          new Promise((ok, fail) => {
            const timer = setTimeout(() => fail(new Error(`${lines.length} of ${n} events arrived`)), 10_000);
            const check = (): void => {
              if (lines.length >= n) {
                clearTimeout(timer);
                ok();
              } else waiters.push(check);
            };
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', (e) => {
      if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e);
    });
    req.end();
  });
}

describe('responses from cached encodings', () => {
  it('GET and LIST bodies are the compact JSON of the object, its PartialObjectMetadata and their lists', async () => {
    const created = await raw(s, 'POST', CM, { body: { metadata: { name: 'formats', labels: { l: 'x' } }, data: { text: 'ü "quoted" \u2028 end' } } });
    expect(created.status).toBe(201);
    const obj = await get(`${CM}/formats`, ACCEPT.json);
    expect(obj.json.data).toEqual({ text: 'ü "quoted" \u2028 end' });
    for (const [accept, apiVersion] of [
      [ACCEPT.partialV1, 'meta.k8s.io/v1'],
      [ACCEPT.partialV1beta1, 'meta.k8s.io/v1beta1'],
    ] as const) {
      const partial = await get(`${CM}/formats`, accept);
      expect(partial.json).toEqual({ kind: 'PartialObjectMetadata', apiVersion, metadata: (JSON.parse(obj.text) as { metadata: unknown }).metadata });
    }
    const list = await get(`${CM}?labelSelector=l%3Dx`, ACCEPT.json);
    expect(list.json.kind).toBe('ConfigMapList');
    // A list item is the object's text without its kind and apiVersion, as upstream's typed lists.
    const { kind: _kind, apiVersion: _apiVersion, ...item } = JSON.parse(obj.text) as Record<string, unknown>;
    expect(list.text).toContain(JSON.stringify(item));
    const partialList = await get(`${CM}?labelSelector=l%3Dx`, ACCEPT.partialListV1);
    expect(partialList.json.kind).toBe('PartialObjectMetadataList');
    expect(partialList.json.items?.map((i) => i.metadata.name)).toEqual(['formats']);
    const paged = await get(`${CM}?limit=1`, ACCEPT.json);
    expect(paged.json.metadata.continue).toEqual(expect.any(String));
  });

  it('an update is served at once in every representation', async () => {
    await raw(s, 'POST', CM, { body: { metadata: { name: 'versions' }, data: { v: 'one' } } });
    const before = await Promise.all(Object.values(ACCEPT).map((a) => get(a === ACCEPT.partialListV1 ? CM : `${CM}/versions`, a)));
    const watch = await rawWatch(`${CM}?watch=1&fieldSelector=metadata.name%3Dversions&resourceVersion=${String(before[0]?.json.metadata.resourceVersion)}`, ACCEPT.json);
    try {
      const patched = await raw(s, 'PATCH', `${CM}/versions`, { body: { data: { v: 'two' } }, contentType: 'application/merge-patch+json' });
      expect(patched.status).toBe(200);
      const rv = (patched.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      const obj = await get(`${CM}/versions`, ACCEPT.json);
      expect(obj.json.data).toEqual({ v: 'two' });
      expect(obj.json.metadata.resourceVersion).toBe(rv);
      for (const accept of [ACCEPT.partialV1, ACCEPT.partialV1beta1]) expect((await get(`${CM}/versions`, accept)).json.metadata.resourceVersion).toBe(rv);
      const listed: unknown = (await get(CM, ACCEPT.json)).json.items?.find((i) => i.metadata.name === 'versions');
      expect(listed).toMatchObject({ metadata: { resourceVersion: rv }, data: { v: 'two' } });
      await watch.waitFor(1);
      expect(watch.lines[0]).toBe(`${JSON.stringify({ type: 'MODIFIED', object: JSON.parse(obj.text) as unknown })}\n`);
    } finally {
      watch.close();
    }
  });

  it('the watchers of one write get the same bytes, encoded once', async () => {
    const rv = String((await get(CM, ACCEPT.json)).json.metadata.resourceVersion);
    const path = `${CM}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dfan-out`;
    const watchers = 20;
    const partial = await Promise.all(Array.from({ length: watchers }, () => rawWatch(path, ACCEPT.partialV1)));
    const plain = await Promise.all(Array.from({ length: watchers }, () => rawWatch(path, ACCEPT.json)));
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      const created = await raw(s, 'POST', CM, { body: { metadata: { name: 'fan-out' }, data: { k: 'v' } } });
      expect(created.status).toBe(201);
      await Promise.all([...partial, ...plain].map((w) => w.waitFor(1)));
      // What was encoded for the event, whatever the number of watchers: at most the object once (the
      // store may hand over its text) and its metadata once (for the PartialObjectMetadata); never a
      // value twice, never a PartialObjectMetadata or an event per watcher.
      const encoded = stringify.mock.calls.map(([v]) => v).filter((v) => {
        const o = v as { kind?: unknown; name?: unknown; type?: unknown; metadata?: { name?: unknown } } | null;
        return typeof o === 'object' && o !== null && (o.kind === 'PartialObjectMetadata' || o.name === 'fan-out' || o.type !== undefined || (Object.isFrozen(o) && o.metadata?.name === 'fan-out'));
      });
      expect(encoded.filter((v) => (v as { kind?: unknown }).kind === 'PartialObjectMetadata' || (v as { type?: unknown }).type !== undefined)).toEqual([]);
      expect(new Set(encoded).size).toBe(encoded.length);
      expect(encoded.length).toBeLessThanOrEqual(2);
    } finally {
      stringify.mockRestore();
      for (const w of [...partial, ...plain]) w.close();
    }
    const obj = (await get(`${CM}/fan-out`, ACCEPT.json)).text.slice(0, -1);
    const partialObj = (await get(`${CM}/fan-out`, ACCEPT.partialV1)).text.slice(0, -1);
    for (const w of plain) expect(w.lines).toEqual([`{"type":"ADDED","object":${obj}}\n`]);
    for (const w of partial) expect(w.lines).toEqual([`{"type":"ADDED","object":${partialObj}}\n`]);
  });
});
