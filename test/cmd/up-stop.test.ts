/**
 * `up`'s stop, as a restart exercises it: SIGTERM while writes are under way, a client holds a
 * watch open and another a request whose body never ends (so a connection outlives the close's
 * grace and is left for the exit to end): `up` exits 0, its controller released its Lease first,
 * every write it acknowledged is there after the restart, and audited (batch mode: flushed at the stop).
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { kill9, startUpChild } from '../helpers/cli.js';
import { openWatch, raw, type RawTarget } from '../helpers/http.js';

const children: ChildProcess[] = [];
afterAll(() => Promise.all(children.map(kill9)));

async function startUp(dataDir: string, extra: string[] = []): Promise<{ child: ChildProcess; target: RawTarget; output(): string }> {
  const up = await startUpChild(['--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0', ...extra]);
  children.push(up.child);
  const target = {
    url: up.field('API server'),
    caPem: readFileSync(path.join(dataDir, 'ca.crt'), 'utf8'),
    admin: { certPem: readFileSync(path.join(dataDir, 'admin.crt'), 'utf8'), keyPem: readFileSync(path.join(dataDir, 'admin.key'), 'utf8') },
  };
  return { child: up.child, target, output: up.output };
}

it('stops on SIGTERM with writes under way and a watch open: exit 0, Lease released, every acknowledged write kept and audited', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-up-stop-'));
  try {
    // Audit events buffered until the stop flushes them: the watch keeps a connection open past the
    // close's grace, which up leaves for its exit to end, after the flush.
    const first = await startUp(dataDir, ['--audit-log-mode', 'batch', '--audit-log-batch-max-size', '1000', '--audit-log-batch-max-wait', '10m']);
    const leaseLog = (): boolean =>
      readFileSync(path.join(dataDir, 'kube-identity.log'), 'utf8')
        .split('\n')
        .some((l) => l.includes('"msg":"released lease"'));
    const watch = await openWatch(first.target, '/api/v1/namespaces/default/configmaps?watch=true', {}, 'h2');
    expect(watch.status).toBe(200);
    const stalled = http2.connect(first.target.url, { ca: readFileSync(path.join(dataDir, 'ca.crt')), cert: readFileSync(path.join(dataDir, 'admin.crt')), key: readFileSync(path.join(dataDir, 'admin.key')) });
    stalled.on('error', () => undefined);
    const unfinished = stalled.request({ ':method': 'POST', ':path': '/api/v1/namespaces/default/configmaps', 'content-type': 'application/json' });
    unfinished.on('error', () => undefined);
    unfinished.write('{"metadata":');
    const exited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
    const writes = Array.from({ length: 40 }, (_, i) =>
      raw(first.target, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `cm-${i}` }, data: { i: String(i) } }, protocol: 'h2' }).then(
        (r) => (r.status === 201 ? `cm-${i}` : undefined),
        () => undefined,
      ),
    );
    // Signalled once the first is answered, so the others are under way or refused.
    await Promise.race(writes);
    first.child.kill('SIGTERM');
    const acknowledged = (await Promise.all(writes)).filter((name): name is string => name !== undefined);
    expect(await exited).toBe(0);
    expect(first.output()).toContain('kube-identity stopped.');
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(leaseLog()).toBe(true);
    watch.close();
    stalled.destroy();
    const audited = new Set(
      readFileSync(path.join(dataDir, 'audit.log'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"stage":"ResponseComplete"') && l.includes('"verb":"create"'))
        .map((l) => (JSON.parse(l) as { objectRef?: { name?: string } }).objectRef?.name),
    );
    for (const name of acknowledged) expect([name, audited.has(name)]).toEqual([name, true]);

    const second = await startUp(dataDir);
    const list = await raw(second.target, 'GET', '/api/v1/namespaces/default/configmaps');
    expect(list.status).toBe(200);
    const kept = new Set((list.json.items as { metadata: { name: string } }[]).map((c) => c.metadata.name));
    for (const name of acknowledged) expect(kept.has(name)).toBe(true);
    await kill9(second.child);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120_000);
