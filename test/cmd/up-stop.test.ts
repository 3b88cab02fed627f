/**
 * `up`'s stop, as a restart exercises it: SIGTERM while writes are under way and a client holds a
 * watch open (so its connection must be ended, not closed by its client): `up` exits 0, its
 * controller released its Lease first, and every write it acknowledged is there after the restart.
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kill9, startUpChild } from '../helpers/cli.js';
import { openWatch, raw, type RawTarget } from '../helpers/http.js';

const children: ChildProcess[] = [];
afterAll(() => Promise.all(children.map(kill9)));

async function startUp(dataDir: string): Promise<{ child: ChildProcess; target: RawTarget; output(): string }> {
  const up = await startUpChild(['--data-dir', dataDir, '--port', '0', '--metrics-bind-address', '127.0.0.1:0']);
  children.push(up.child);
  const target = {
    url: up.field('API server'),
    caPem: readFileSync(path.join(dataDir, 'ca.crt'), 'utf8'),
    admin: { certPem: readFileSync(path.join(dataDir, 'admin.crt'), 'utf8'), keyPem: readFileSync(path.join(dataDir, 'admin.key'), 'utf8') },
  };
  return { child: up.child, target, output: up.output };
}

it('stops on SIGTERM with writes under way and a watch open: exit 0, Lease released, every acknowledged write kept', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-up-stop-'));
  try {
    const first = await startUp(dataDir);
    const leaseLog = (): boolean =>
      readFileSync(path.join(dataDir, 'kube-identity.log'), 'utf8')
        .split('\n')
        .some((l) => l.includes('"msg":"released lease"'));
    const watch = await openWatch(first.target, '/api/v1/namespaces/default/configmaps?watch=true', {}, 'h2');
    expect(watch.status).toBe(200);
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
