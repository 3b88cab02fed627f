/**
 * The Panic stage: an unexpected exception in a handler ends the request's audit trail with upstream's
 * Panic event (a 500 InternalError status), and nothing is emitted for the request after it. No request
 * from outside can make a handler throw, so this drives RequestAudit over a real HTTP exchange.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseRequestInfo } from '../http/request-info.js';
import type { RequestAuditConfig } from './policy.js';
import { AUDIT_ID_HEADER, RequestAudit, type AuditSink } from './request.js';
import type { AuditEvent, Stage } from './types.js';

async function exchange(omitStages: Stage[]): Promise<{ events: AuditEvent[]; auditId: string | null }> {
  const events: AuditEvent[] = [];
  const config: RequestAuditConfig = { level: 'Metadata', omitStages, omitManagedFields: true };
  const sink: AuditSink = { evaluate: () => config, process: (e) => (events.push(structuredClone(e)), true) };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const audit = new RequestAudit(sink, req, res);
      const url = new URL(req.url ?? '/', 'http://x');
      await audit.authenticated(parseRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams), { username: 'alice', groups: ['system:authenticated'] });
      await audit.panicked(new Error('nil map'));
      await audit.completed(500); // the pipeline's later paths must not add a second terminal event
      res.statusCode = 500;
      res.end();
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/namespaces/default/configmaps/c1`);
    return { events, auditId: res.headers.get(AUDIT_ID_HEADER) };
  } finally {
    await new Promise((r) => server.close(r));
  }
}

describe('RequestAudit Panic stage', () => {
  it('ends the trail with a Panic event carrying a 500 InternalError, and emits nothing after it', async () => {
    const { events, auditId } = await exchange([]);
    expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'Panic']);
    const panic = events[1];
    expect(panic).toMatchObject({
      auditID: auditId,
      verb: 'get',
      user: { username: 'alice' },
      objectRef: { resource: 'configmaps', namespace: 'default', name: 'c1', apiVersion: 'v1' },
      responseStatus: { status: 'Failure', reason: 'InternalError', code: 500, message: "APIServer panic'd: nil map" },
    });
  });

  it('leaves the Panic event out when the policy omits that stage', async () => {
    const { events } = await exchange(['Panic']);
    expect(events.map((e) => e.stage)).toEqual(['RequestReceived']);
  });
});
