/**
 * Durability through the real program: writes acknowledged by an `apiserver` child process on a
 * SQLite data directory survive `kill -9`, and the revision keeps increasing after a restart.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kill9, startApiserverChild } from '../helpers/cli.js';
import { raw, type RawTarget } from '../helpers/http.js';

const children: ChildProcess[] = [];

async function startChild(dataDir: string): Promise<{ child: ChildProcess; target: RawTarget }> {
  const started = await startApiserverChild(dataDir);
  children.push(started.child);
  return started;
}

// Waits for each child to be gone: a child still exiting holds the jest worker open.
afterAll(() => Promise.all(children.map(kill9)));

it('keeps every acknowledged object across kill -9 and continues the revision', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-restart-'));
  try {
    const first = await startChild(dataDir);
    const ns = await raw(first.target, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'durable' } } });
    expect(ns.status).toBe(201);
    const acked: Record<string, string> = {};
    let maxRv = 0;
    for (let i = 0; i < 15; i++) {
      const r = await raw(first.target, 'POST', '/api/v1/namespaces/durable/serviceaccounts', { body: { metadata: { name: `sa-${i}` } } });
      expect(r.status).toBe(201);
      acked[r.json.metadata.name] = r.json.metadata.uid;
      maxRv = Math.max(maxRv, Number(r.json.metadata.resourceVersion));
    }
    await kill9(first.child);

    const second = await startChild(dataDir);
    const list = await raw(second.target, 'GET', '/api/v1/namespaces/durable/serviceaccounts');
    expect(list.status).toBe(200);
    const found = Object.fromEntries(
      list.json.items.map((i: { metadata: { name: string; uid: string } }) => [i.metadata.name, i.metadata.uid]),
    );
    for (const [name, uid] of Object.entries(acked)) expect(found[name]).toBe(uid);
    const next = await raw(second.target, 'POST', '/api/v1/namespaces/durable/serviceaccounts', { body: { metadata: { name: 'after' } } });
    expect(next.status).toBe(201);
    expect(Number(next.json.metadata.resourceVersion)).toBeGreaterThan(maxRv);
    await kill9(second.child);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120_000);
