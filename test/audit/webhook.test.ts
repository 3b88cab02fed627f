/**
 * The webhook backend against a receiver of the test's own (HTTPS, its own CA, a bearer token from
 * the kubeconfig): batches arrive as EventLists; a receiver that is down or stalls never holds a
 * request, and what is lost is counted in apiserver_audit_error_total{plugin="webhook"}.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parsePolicy } from '../../src/apiserver/audit/policy.js';
import type { AuditEvent } from '../../src/apiserver/audit/types.js';
import { ensureCredentials } from '../../src/apiserver/server/credentials.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TOKEN = 'receiver-token-1';
// The test's own scrapes of /metrics are left out, so they never compete with the requests for the buffer.
const POLICY = parsePolicy(
  'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: None\n    nonResourceURLs: [/metrics]\n  - level: Metadata\n',
);

interface Receiver {
  lists: { items: AuditEvent[]; kind: string; apiVersion: string }[];
  authorization: (string | undefined)[];
  server: Server;
  port: number;
  /** Requests are held unanswered while stalled. */
  stalled: boolean;
  close(): Promise<void>;
}

async function startReceiver(tls: { cert: string; key: string }, port = 0): Promise<Receiver> {
  const held: (() => void)[] = [];
  const r: Receiver = {
    lists: [],
    authorization: [],
    stalled: false,
    port: 0,
    server: createServer(tls, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = (): void => {
          r.authorization.push(req.headers.authorization);
          r.lists.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          res.writeHead(200).end();
        };
        if (r.stalled) held.push(() => res.destroy());
        else answer();
      });
    }),
    async close() {
      for (const h of held.splice(0)) h();
      await new Promise<void>((resolve) => {
        r.server.close(() => resolve());
        r.server.closeAllConnections();
      });
    },
  };
  await new Promise<void>((resolve) => r.server.listen(port, '127.0.0.1', resolve));
  r.port = (r.server.address() as AddressInfo).port;
  return r;
}

const received = (r: Receiver): string[] => r.lists.flatMap((l) => l.items.map((e) => e.auditID));

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function webhookErrors(server: TestServer): Promise<number> {
  const m = /^apiserver_audit_error_total\{plugin="webhook"\} (\d+)$/m.exec((await raw(server, 'GET', '/metrics')).text);
  return Number(m?.[1] ?? NaN);
}

let dir: string;
let receiver: Receiver;
let tls: { cert: string; key: string };
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'audit-webhook-'));
  const id = await ensureCredentials(path.join(dir, 'receiver'), ['127.0.0.1']);
  tls = { cert: id.servingCertPem, key: id.servingKeyPem };
  receiver = await startReceiver(tls);
  const kubeconfig = path.join(dir, 'webhook.kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '  - name: receiver',
      '    cluster:',
      `      server: https://127.0.0.1:${receiver.port}/audit`,
      `      certificate-authority-data: ${Buffer.from(id.caPem).toString('base64')}`,
      'users:',
      '  - name: apiserver',
      '    user:',
      `      token: ${TOKEN}`,
      'contexts:',
      '  - name: webhook',
      '    context: {cluster: receiver, user: apiserver}',
      'current-context: webhook',
      '',
    ].join('\n'),
  );
  server = await startTestServer({
    audit: {
      policy: POLICY,
      stdout: process.stdout,
      webhook: {
        configFile: kubeconfig,
        mode: 'batch',
        initialBackoffMs: 50,
        // Small batches and buffer, and a slow throttle after the first batches, so a stall fills the buffer.
        batch: { bufferSize: 30, maxBatchSize: 5, maxBatchWaitMs: 100, throttle: { qps: 2, burst: 4 }, asyncDelegate: true },
      },
    },
  });
});

afterAll(async () => {
  await server.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

it('sends the events in batches of EventLists with the kubeconfig\'s credentials', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push(String((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps')).headers['audit-id']));
  await until(() => ids.every((id) => received(receiver).includes(id)), 'all 12 events at the receiver');
  for (const list of receiver.lists) {
    expect(list).toMatchObject({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1' });
    expect(list.items.length).toBeGreaterThan(0);
    expect(list.items.length).toBeLessThanOrEqual(5);
  }
  expect(receiver.lists.length).toBeGreaterThanOrEqual(3);
  expect(new Set(receiver.authorization)).toEqual(new Set([`Bearer ${TOKEN}`]));
  const ev = receiver.lists.flatMap((l) => l.items).find((e) => e.auditID === ids[0]);
  expect(ev).toMatchObject({ stage: 'ResponseComplete', level: 'Metadata', verb: 'list', user: { groups: expect.arrayContaining(['system:masters']) }, responseStatus: { code: 200 } });
  expect(await webhookErrors(server)).toBe(0);
});

it('answers every request while the receiver stalls or is down, counts what is lost, and delivers again once it is back', async () => {
  receiver.stalled = true;
  // All at once, so they outrun the throttled batches: the buffer (30) overflows while batches are held.
  const answers = await Promise.all(Array.from({ length: 100 }, () => raw(server, 'GET', '/api/v1/namespaces/default/configmaps')));
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
  await until(async () => (await webhookErrors(server)) > 0, 'dropped events counted');
  const port = receiver.port;
  await receiver.close();
  const droppedWhileStalled = await webhookErrors(server);
  for (let i = 0; i < 10; i++) expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
  await until(async () => (await webhookErrors(server)) > droppedWhileStalled, 'events refused by a dead receiver counted');

  receiver = await startReceiver(tls, port);
  // Requests keep coming while the backlog drains (throttled): those that find room in the buffer are delivered.
  const later: string[] = [];
  await until(
    async () => {
      later.push(String((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps')).headers['audit-id']));
      return later.some((id) => received(receiver).includes(id));
    },
    'an event made after the receiver came back delivered',
    30_000,
  );
  // Waits on a throttled backlog (2 batches a second) on a host that may be loaded.
}, 120_000);
