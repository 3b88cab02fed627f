/**
 * --audit-log-maxsize and --audit-log-maxbackup through the real server: the log is rotated before
 * it passes the size (in MB), backups are named `<name>-<timestamp>.<ext>` as lumberjack names them,
 * only the newest backups are kept, and no event is split or lost across a rotation.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parsePolicy } from '../../src/apiserver/audit/policy.js';
import { raw } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { readEvents } from './helpers.js';

const MB = 1024 * 1024;
const POLICY = parsePolicy(
  'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: RequestResponse\n    resources: [{group: "", resources: [configmaps]}]\n',
);

it('rotates by size, names backups with a timestamp and keeps maxbackup of them', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-rotate-'));
  const log = path.join(dir, 'audit.log');
  const server = await startTestServer({
    audit: {
      policy: POLICY,
      stdout: process.stdout,
      log: {
        path: log,
        maxSizeMb: 1,
        maxBackups: 2,
        maxAgeDays: 0,
        compress: false,
        format: 'json',
        mode: 'blocking',
        batch: { bufferSize: 10_000, maxBatchSize: 1, maxBatchWaitMs: 0, asyncDelegate: false },
      },
    },
  });
  try {
    // Each create is one ~600 kB event (the ConfigMap in the request and in the response): two fill a file.
    const filler = 'x'.repeat(300 * 1024);
    const names: string[] = [];
    for (let i = 0; i < 10; i++) {
      names.push(`cm-${i}`);
      expect((await raw(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `cm-${i}` }, data: { filler } } })).status).toBe(201);
    }
    // A last small request, so the tenth create's event (written after its answer) is surely on disk.
    const last = (await raw(server, 'GET', '/api/v1/namespaces/default/configmaps/cm-0?x=last')).headers['audit-id'];
    const files = async (): Promise<string[]> => readdirSync(dir).sort();
    for (let i = 0; i < 200 && !readEvents(log).some((e) => e.auditID === last); i++) await new Promise((r) => setTimeout(r, 25));

    const all = await files();
    const backups = all.filter((f) => f !== 'audit.log');
    expect(all).toContain('audit.log');
    expect(backups).toHaveLength(2);
    for (const b of backups) expect(b).toMatch(/^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/);
    for (const f of all) expect(statSync(path.join(dir, f)).size).toBeLessThanOrEqual(MB);
    // Oldest backup first (by name, which is by time), then the live file: the newest creates, in order, each whole.
    const kept = [...backups, 'audit.log'].flatMap((f) => readEvents(path.join(dir, f)));
    const created = kept.filter((e) => e.verb === 'create').map((e) => e.objectRef?.name);
    expect(created.length).toBeGreaterThanOrEqual(3);
    expect(created).toEqual(names.slice(names.length - created.length));
    expect(kept.at(-1)?.auditID).toBe(last);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
