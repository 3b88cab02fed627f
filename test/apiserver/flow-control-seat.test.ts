/**
 * How long a request holds its flow-control seat, as upstream's filters hold it: until its handler
 * returns. A handler still running after its --request-timeout 504 (its store write held back by the
 * test) keeps the seat, so the next request of its level is shed; once the handler returns the seat
 * is free. A client that goes away while its request is being authenticated leaves no seat taken.
 * Both with priority and fairness (a level that rejects rather than queues) and with the plain
 * max-in-flight limits; one seat each. A request that finds no seat waits in its queue for a
 * quarter of its deadline (--request-timeout or its `?timeout=`), then is shed 429, as upstream's.
 */
import https from 'node:https';
import type { UserInfo } from '../../src/api/meta.js';
import type { Authenticator } from '../../src/apiserver/authentication/types.js';
import type { FlowControlOptions } from '../../src/apiserver/flowcontrol/flow-control.js';
import { GatedStore } from '../helpers/gated-store.js';
import { raw, TOO_MANY_REQUESTS, type RawTarget } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ADMIN_USER, staticTokenAuthenticator } from '../helpers/static-auth.js';
import { until } from '../helpers/wait.js';

const NS = '/api/v1/namespaces/default/configmaps';
const ADMIN = 'admin-token';
const ALICE = 'alice-token';
/** A token whose authentication waits until the test lets it finish. */
const LEAVING = 'leaving-token';
const alice: UserInfo = { username: 'alice', groups: ['system:authenticated'] };
const tokens = staticTokenAuthenticator(
  new Map([
    [ADMIN, ADMIN_USER],
    [ALICE, alice],
    [LEAVING, alice],
  ]),
);

const configMap = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

type Limits = Omit<FlowControlOptions, 'registry'>;
const MODES: [string, Limits][] = [
  // One workload seat (125 of the 215 shares, rounded up) and no queue: a second request is shed at once.
  ['priority and fairness', { maxRequestsInflight: 1, maxMutatingRequestsInflight: 0, queuing: { workload: { queues: 0, queueLengthLimit: 0, handSize: 0 } } }],
  ['max-in-flight', { maxRequestsInflight: 1, maxMutatingRequestsInflight: 1, priorityAndFairness: false }],
];

describe.each(MODES)('with %s', (_mode, flowControl) => {
  let s: TestServer;
  let store: GatedStore;
  let target: RawTarget;
  let arrived: () => void = () => undefined;
  let release: () => void = () => undefined;

  beforeAll(async () => {
    store = new GatedStore();
    const authenticator: Authenticator = {
      async authenticate(req) {
        if (req.headers.authorization === `Bearer ${LEAVING}`) {
          arrived();
          await new Promise<void>((resolve) => (release = resolve));
        }
        return tokens.authenticate(req);
      },
    };
    s = await startTestServer({ store, authenticator, flowControl, requestDeadlineMs: 1_000 });
    target = { url: s.url, caPem: s.caPem, admin: { token: ADMIN } };
  });
  afterAll(async () => {
    store.openGate();
    release();
    await s.close();
  });

  /** A create of alice's that needs the seat; its status. */
  let n = 0;
  const aliceCreates = async (): Promise<number> => (await raw(target, 'POST', NS, { token: ALICE, body: configMap(`fast-${n++}`) })).status;

  it('a handler that runs on after its 504 keeps its seat until it returns', async () => {
    expect(await aliceCreates()).toBe(201);
    const timedOut = await raw(target, 'POST', NS, { token: ALICE, body: configMap('slow-held') });
    expect(timedOut.status).toBe(504);
    // The handler still waits on the store, on its seat: alice's next request finds none.
    const shed = await raw(target, 'POST', NS, { token: ALICE, body: configMap('fast-shed') });
    expect(shed.status).toBe(429);
    expect(shed.json).toEqual(TOO_MANY_REQUESTS);
    expect(await aliceCreates()).toBe(429);
    // system:masters is exempt, and sees the write not yet made.
    expect((await raw(target, 'GET', `${NS}/slow-held`)).status).toBe(404);

    store.openGate();
    // The handler returns after its write: its seat is free again.
    await until('the held create to land', async () => (await raw(target, 'GET', `${NS}/slow-held`)).status === 200);
    await until('alice to be served again', async () => (await aliceCreates()) === 201);
    expect(await aliceCreates()).toBe(201);
  }, 30_000);

  it('a client gone while its request was authenticated leaves no seat taken', async () => {
    const inAuthentication = new Promise<void>((resolve) => (arrived = resolve));
    const req = https.request(new URL(NS, target.url), { method: 'GET', ca: target.caPem, headers: { Authorization: `Bearer ${LEAVING}` } });
    req.on('error', () => undefined);
    req.end();
    await inAuthentication;
    req.destroy();
    // The server notices the closed connection before the authenticator answers.
    await new Promise((r) => setTimeout(r, 200));
    release();
    // The request ran (its answer went nowhere) and gave its seat back.
    await until('alice to be served', async () => (await raw(target, 'GET', NS, { token: ALICE })).status === 200);
    expect(await aliceCreates()).toBe(201);
    expect((await raw(target, 'GET', NS, { token: ALICE })).status).toBe(200);
  }, 30_000);
});

describe('the queue wait', () => {
  let s: TestServer;
  let store: GatedStore;
  let target: RawTarget;

  beforeAll(async () => {
    store = new GatedStore();
    // One workload seat and one queue of one; --request-timeout 1 s lets a queued request wait 250 ms.
    const flowControl = { maxRequestsInflight: 1, maxMutatingRequestsInflight: 0, queuing: { workload: { queues: 1, queueLengthLimit: 1, handSize: 1 } } };
    s = await startTestServer({ store, authenticator: tokens, flowControl, requestDeadlineMs: 1_000 });
    target = { url: s.url, caPem: s.caPem, admin: { token: ADMIN } };
  });
  afterAll(async () => {
    store.openGate();
    await s.close();
  });

  it('is a quarter of the request timeout: a request that waits it out is shed 429 before its deadline', async () => {
    const held = raw(target, 'POST', NS, { token: ALICE, body: configMap('slow-seat') });
    await until('the first create to take the seat', () => store.held === 1);
    // Queued behind it, each gives up a quarter into its deadline (250 ms of 1 s; 100 ms of 400 ms):
    // a 429 to retry, not the 504 its deadline would give.
    for (const path of [NS, `${NS}?timeout=400ms`]) {
      const queued = await raw(target, 'POST', path, { token: ALICE, body: configMap('fast-queued') });
      expect(`${path} ${queued.status}`).toBe(`${path} 429`);
      expect(queued.headers['retry-after']).toBe('1');
      expect(queued.json).toEqual(TOO_MANY_REQUESTS);
    }
    expect((await held).status).toBe(504);
    store.openGate();
    await until('the seat to be free', async () => (await raw(target, 'POST', NS, { token: ALICE, body: configMap('fast-queued') })).status === 201);
  }, 30_000);
});
