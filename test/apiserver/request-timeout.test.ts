/**
 * --request-timeout (src/apiserver/server/request-timeout.ts): a request whose handler has not
 * answered by the deadline gets kube-apiserver's 504 Timeout Status; `?timeout=` shortens the deadline,
 * never lengthens it, and is a 400 when it is not a duration; watches have no such deadline. The
 * handler that answers late (its store write held back by the test) changes nothing on the wire, its
 * write lands whole, and the server goes on serving.
 */
import { embeddedOptions } from '../../src/cmd/apiserver.js';
import { loadApiserverConfig, loadUpConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log/logger.js';
import { GatedStore } from '../helpers/gated-store.js';
import { openWatch, raw, type RawTarget } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const NS = '/api/v1/namespaces/default/configmaps';
const TIMEOUT_STATUS = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Timeout: request did not complete within requested timeout - context deadline exceeded',
  reason: 'Timeout',
  code: 504,
};

let s: TestServer;
let store: GatedStore;
let target: RawTarget;
const logs: { level: number; msg: string }[] = [];

beforeAll(async () => {
  store = new GatedStore();
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) } });
  // The server's own deadline: 1 s, so a request without ?timeout= meets it within the test.
  s = await startTestServer({ store, logger, requestDeadlineMs: 1_000 });
  target = { url: s.url, caPem: s.caPem, admin: s.admin };
});
afterAll(async () => {
  store.openGate();
  await s.close();
});

const configMap = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });

describe.each(['http/1.1', 'h2'] as const)('over %s', (protocol) => {
  it('answers 504 Timeout when the handler has not answered by the deadline; the late write lands whole and changes nothing on the wire', async () => {
    const name = `slow-${protocol === 'h2' ? 'h2' : 'h1'}`;
    const held = store.held;
    const r = await raw(target, 'POST', NS, { body: configMap(name), protocol });
    expect(r.status).toBe(504);
    expect(r.json).toEqual(TIMEOUT_STATUS);
    expect(store.held).toBe(held + 1);
    // Not yet written: the handler is still waiting on the store.
    expect((await raw(target, 'GET', `${NS}/${name}`, { protocol })).status).toBe(404);

    store.openGate();
    // The create goes on after the 504, as upstream's does: one atomic write, then its answer is dropped.
    await until('the late create to land', async () => (await raw(target, 'GET', `${NS}/${name}`, { protocol })).status === 200);
    const stored = (await raw(target, 'GET', `${NS}/${name}`, { protocol })).json as { data?: unknown; metadata: { resourceVersion?: string } };
    expect(stored.data).toEqual({ k: 'v' });
    expect(stored.metadata.resourceVersion).toMatch(/^\d+$/);
    // A second create of it finds it there: the client that got the 504 learns it this way.
    expect((await raw(target, 'POST', NS, { body: configMap(name), protocol })).status).toBe(409);
    // Its answer, written to a response already ended, was dropped without an error.
    expect(logs.filter((l) => l.level >= 40)).toEqual([]);
  }, 30_000);
});

it('?timeout= shortens the deadline for its request, never lengthens it', async () => {
  const short = await raw(target, 'POST', `${NS}?timeout=100ms`, { body: configMap('slow-short') });
  expect(short.status).toBe(504);
  expect(short.json).toEqual(TIMEOUT_STATUS);
  // Longer than the server's: the server's 1 s applies (with the store held, an hour would hang the test).
  const long = await raw(target, 'POST', `${NS}?timeout=1h`, { body: configMap('slow-long') });
  expect(long.status).toBe(504);
  // Zero is no wish of the client's (upstream's reading): the server's deadline, not an instant 504.
  const zero = await raw(target, 'POST', `${NS}?timeout=0s`, { body: configMap('fast-zero') });
  expect(zero.status).toBe(201);
  store.openGate();
}, 30_000);

it('a ?timeout= that is not a duration is a 400 with upstream\'s message', async () => {
  const r = await raw(target, 'GET', `${NS}?timeout=soon`);
  expect(r.status).toBe(400);
  expect(r.json).toMatchObject({ reason: 'BadRequest', message: 'invalid timeout specified in the request URL - time: invalid duration "soon"' });
  expect((await raw(target, 'GET', `${NS}?timeout=5s`)).status).toBe(200);
});

it('a watch outlives the deadline: it is long-running', async () => {
  const watch = await openWatch(target, `${NS}?watch=1&fieldSelector=metadata.name%3Dafter-deadline`);
  try {
    expect(watch.status).toBe(200);
    // Past the server's 1 s deadline the watch still delivers (one given the deadline is aborted then: its headers are out).
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await raw(target, 'POST', NS, { body: configMap('after-deadline') })).status).toBe(201);
    const [event] = await watch.waitFor(1);
    expect(event).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'after-deadline' } } });
  } finally {
    watch.close();
  }
}, 30_000);

it('--request-timeout is kube-apiserver\'s flag, default 1m, for apiserver and up; it must be above zero', async () => {
  expect(embeddedOptions(await loadApiserverConfig({ flags: {}, env: {} })).requestDeadlineMs).toBe(60_000);
  expect(embeddedOptions(await loadApiserverConfig({ flags: { requestTimeout: '30s' }, env: {} })).requestDeadlineMs).toBe(30_000);
  expect((await loadUpConfig({ flags: {}, env: { KUBE_IDENTITY_REQUEST_TIMEOUT: '2m30s' } })).requestTimeout).toBe(150_000);
  // Zero would answer every request 504 at once.
  await expect(loadApiserverConfig({ flags: { requestTimeout: '0s' }, env: {} })).rejects.toThrow('must be at least 1ms, got "0s"');
});
