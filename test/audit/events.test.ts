/**
 * The audit log through the real server, with the documentation's example policy: which requests
 * are recorded at which level and stage, and every field upstream's Event carries.
 */
import path from 'node:path';
import { presenting, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { byId, eventsWhen, logAudit, readEvents } from './helpers.js';

const POLICY = path.join(process.cwd(), 'test/audit/docs-example-policy.yaml');
const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

let server: TestServer;
let log: string;

beforeAll(async () => {
  const dir = (await import('node:fs')).mkdtempSync(path.join((await import('node:os')).tmpdir(), 'audit-events-'));
  log = path.join(dir, 'logs', 'audit.log');
  server = await startTestServer({ audit: logAudit(POLICY, log), tokenFile: 'bob-token,bob,bob-uid,\n' });
});
afterAll(() => server.close());

const cm = (name: string): object => ({ metadata: { name }, data: { k: 'v' } });

it('records a kube-system ConfigMap create at Request: the body, no response, one event at ResponseComplete', async () => {
  const r = await raw(server, 'POST', '/api/v1/namespaces/kube-system/configmaps', { body: cm('a'), headers: { 'User-Agent': 'audit-test/1.0' } });
  expect(r.status).toBe(201);
  const id = r.headers['audit-id'];
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  const [ev, ...more] = byId(await eventsWhen(log, (evs) => byId(evs, id).length > 0), id);
  expect(more).toEqual([]);
  expect(ev).toMatchObject({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Request',
    stage: 'ResponseComplete',
    requestURI: '/api/v1/namespaces/kube-system/configmaps',
    verb: 'create',
    user: { username: 'kubernetes-admin', groups: expect.arrayContaining(['system:masters', 'system:authenticated']) },
    sourceIPs: ['127.0.0.1'],
    userAgent: 'audit-test/1.0',
    objectRef: { resource: 'configmaps', namespace: 'kube-system', name: 'a', apiVersion: 'v1' },
    responseStatus: { metadata: {}, code: 201 },
    requestObject: { metadata: { name: 'a' }, data: { k: 'v' } },
    annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': expect.any(String) },
  });
  expect(ev?.responseObject).toBeUndefined();
  // The body as sent: the create stores the decoded body itself (namespace, uid, managedFields set in place), not this copy.
  expect((ev?.requestObject as { metadata?: unknown } | undefined)?.metadata).toStrictEqual({ name: 'a' });
  expect(ev?.requestReceivedTimestamp).toMatch(MICRO);
  expect(ev?.stageTimestamp).toMatch(MICRO);
  expect(ev && ev.stageTimestamp >= ev.requestReceivedTimestamp).toBe(true);
});

it('records nothing for the ConfigMap controller-leader, nor for authenticated discovery and /version', async () => {
  // A create names no object in its URL: resourceNames rules never match it (as in RBAC).
  expect((await raw(server, 'POST', '/api/v1/namespaces/kube-system/configmaps', { body: cm('controller-leader') })).status).toBe(201);
  const before = readEvents(log).length;
  const ids = [
    (await raw(server, 'PUT', '/api/v1/namespaces/kube-system/configmaps/controller-leader', { body: cm('controller-leader') })).headers['audit-id'],
    (await raw(server, 'GET', '/apis/certificates.k8s.io/v1')).headers['audit-id'],
    (await raw(server, 'GET', '/version')).headers['audit-id'],
  ];
  // A request recorded after them proves their events would have been written by now.
  const last = (await raw(server, 'GET', '/api/v1/namespaces/default/configmaps')).headers['audit-id'];
  const evs = await eventsWhen(log, (e) => byId(e, last).length > 0);
  for (const id of ids) expect(id).toBeDefined();
  expect(evs.slice(before).filter((e) => ids.includes(e.auditID))).toEqual([]);
});

it('records a Secret at Metadata (no data) and a Pod at RequestResponse', async () => {
  const secret = await raw(server, 'POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 's' }, stringData: { password: 'hunter2-audit' } } });
  expect(secret.status).toBe(201);
  const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
  const created = await raw(server, 'POST', '/api/v1/namespaces/default/pods', { body: pod });
  expect(created.status).toBe(201);
  const sid = secret.headers['audit-id'];
  const pid = created.headers['audit-id'];
  const evs = await eventsWhen(log, (e) => byId(e, sid).length > 0 && byId(e, pid).length > 0);
  const [s] = byId(evs, sid);
  expect(s).toMatchObject({ level: 'Metadata', objectRef: { resource: 'secrets', name: 's', namespace: 'default' } });
  expect(s?.requestObject).toBeUndefined();
  expect(JSON.stringify(readEvents(log))).not.toContain('hunter2-audit');
  const [p] = byId(evs, pid);
  expect(p).toMatchObject({ level: 'RequestResponse', requestObject: { metadata: { name: 'p' } }, responseObject: { kind: 'Pod', metadata: { name: 'p', uid: expect.any(String) } } });
});

it('records a watch at ResponseStarted and again at ResponseComplete when it ends', async () => {
  const ac = new AbortController();
  const https = await import('node:https');
  const id = await new Promise<string>((resolve, reject) => {
    const req = https.request(
      new URL('/api/v1/namespaces/kube-system/serviceaccounts?watch=1', server.url),
      { ca: server.caPem, ...presenting(server.admin).tls, headers: { ...presenting(server.admin).headers, 'Audit-ID': 'watch-audit-1' }, signal: ac.signal },
      (res) => resolve(String(res.headers['audit-id'])),
    );
    req.on('error', (err) => (ac.signal.aborted ? undefined : reject(err)));
    req.end();
  });
  expect(id).toBe('watch-audit-1');
  const started = await eventsWhen(log, (e) => byId(e, id).length === 1);
  expect(byId(started, id)).toMatchObject([{ stage: 'ResponseStarted', level: 'Request', verb: 'watch', responseStatus: { code: 200 } }]);
  ac.abort();
  const evs = await eventsWhen(log, (e) => byId(e, id).length === 2);
  expect(byId(evs, id).map((e) => e.stage)).toEqual(['ResponseStarted', 'ResponseComplete']);
});

it('records a refusal with the authorizer\'s decision, a bad token without a user, and the impersonator as the user', async () => {
  const forbidden = await raw(server, 'GET', '/api/v1/namespaces/default/secrets', { token: 'bob-token' });
  expect(forbidden.status).toBe(403);
  const bad = await raw(server, 'GET', '/api/v1/namespaces/default/secrets', { token: 'nope' });
  expect(bad.status).toBe(401);
  const as = await raw(server, 'GET', '/api/v1/namespaces/default/serviceaccounts', { headers: { 'Impersonate-User': 'bob' } });
  expect(as.status).toBe(403);
  const ids = [forbidden, bad, as].map((r) => r.headers['audit-id']);
  const evs = await eventsWhen(log, (e) => ids.every((id) => byId(e, id).length > 0));
  expect(byId(evs, ids[0])).toMatchObject([
    {
      stage: 'ResponseComplete',
      user: { username: 'bob' },
      responseStatus: { status: 'Failure', reason: 'Forbidden', code: 403, message: expect.stringContaining('User "bob" cannot list resource "secrets"') },
      annotations: { 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': '' },
    },
  ]);
  expect(byId(evs, ids[1])).toEqual([
    expect.objectContaining({ stage: 'ResponseStarted', user: {}, responseStatus: { metadata: {}, code: 401, message: 'Authentication failed, attempted: bearer' } }),
  ]);
  expect(byId(evs, ids[2])).toMatchObject([
    { stage: 'ResponseComplete', level: 'Request', user: { username: 'kubernetes-admin' }, impersonatedUser: { username: 'bob', groups: ['system:authenticated'] }, responseStatus: { code: 403 } },
  ]);
});

it('counts events and levels in upstream\'s metrics', async () => {
  const metrics = (await raw(server, 'GET', '/metrics')).text;
  expect(metrics).toMatch(/^apiserver_audit_event_total [1-9]\d*$/m);
  expect(metrics).toMatch(/^apiserver_audit_level_total\{level="None"\} [1-9]\d*$/m);
  expect(metrics).toMatch(/^apiserver_audit_level_total\{level="RequestResponse"\} [1-9]\d*$/m);
  expect(metrics).toMatch(/^apiserver_audit_error_total\{plugin="log"\} 0$/m);
});
