/**
 * --audit-log-truncate-* through the real server, as upstream's truncate backend: an event larger
 * than the limit loses its request and response objects and is marked `audit.k8s.io/truncated`; one
 * still too large is dropped and counted in apiserver_audit_error_total{plugin="truncate"}; events
 * within the limit are untouched.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { byId, eventsWhen, logAudit, readEvents } from './helpers.js';

const MAX_EVENT = 4096;

let dir: string;
let log: string;
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'audit-truncate-'));
  const policy = path.join(dir, 'policy.yaml');
  writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: RequestResponse\n    resources: [{ group: "", resources: [configmaps] }]\n');
  log = path.join(dir, 'audit.log');
  server = await startTestServer({ audit: logAudit(policy, log, { truncate: { maxEventSize: MAX_EVENT, maxBatchSize: 10 * 1024 * 1024 } }) });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const configMap = (name: string, size: number): object => ({ metadata: { name }, data: { blob: 'x'.repeat(size) } });

it('keeps small events whole and strips the objects of large ones, marking them truncated', async () => {
  const small = await raw(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: configMap('small', 100) });
  const large = await raw(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: configMap('large', 3 * MAX_EVENT) });
  expect([small.status, large.status]).toEqual([201, 201]);
  const [smallId, largeId] = [small.headers['audit-id'], large.headers['audit-id']];
  const evs = await eventsWhen(log, (e) => byId(e, smallId).length > 0 && byId(e, largeId).length > 0);

  const [kept] = byId(evs, smallId);
  expect(kept).toMatchObject({ level: 'RequestResponse', requestObject: { metadata: { name: 'small' } }, responseObject: { metadata: { name: 'small' } } });
  expect(kept?.annotations?.['audit.k8s.io/truncated']).toBeUndefined();

  const [cut] = byId(evs, largeId);
  expect(cut).toMatchObject({ level: 'RequestResponse', objectRef: { name: 'large' }, responseStatus: { code: 201 }, annotations: { 'audit.k8s.io/truncated': 'true' } });
  expect([cut?.requestObject, cut?.responseObject]).toEqual([undefined, undefined]);
  for (const line of readFileSync(log, 'utf8').split('\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MAX_EVENT);
});

it('drops an event still too large without its objects, and counts it', async () => {
  const before = readEvents(log).length;
  // The request URI alone is larger than the limit.
  const huge = await raw(server, 'GET', `/api/v1/namespaces/default/configmaps?unused=${'q'.repeat(2 * MAX_EVENT)}`);
  expect(huge.status).toBe(200);
  const next = await raw(server, 'GET', '/api/v1/namespaces/default/configmaps/small');
  const evs = await eventsWhen(log, (e) => byId(e, next.headers['audit-id']).length > 0);
  expect(evs.slice(before).map((e) => e.auditID)).toEqual([next.headers['audit-id']]);
  const metrics = (await raw(server, 'GET', '/metrics')).text;
  expect(metrics).toMatch(/^apiserver_audit_error_total\{plugin="truncate"\} 1$/m);
  expect(metrics).toMatch(/^apiserver_audit_error_total\{plugin="log"\} 0$/m);
});
