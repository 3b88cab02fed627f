/**
 * The acknowledged-write guarantee of SqliteStore under `kill -9`: a child process writes through
 * a real SqliteStore and reports each acknowledged write; it is SIGKILLed mid-stream, and the
 * reopened file must hold every acknowledged write (at most the one in flight beyond them), pass
 * integrity_check, and continue with higher revisions.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/apiserver/storage/sqlite/sqlite.js';

interface Ack {
  op: 'create' | 'update' | 'delete';
  key: string;
  i: number;
  revision: number;
}

const here = path.resolve(process.cwd(), 'test/storage');

/** Runs the writer child until it has acknowledged `count` writes, then SIGKILLs it. */
async function writeThenKill(dbPath: string, historyLimit: number, count: number): Promise<Ack[]> {
  const child = spawn(
    process.execPath,
    ['--import', path.join(here, '../helpers/register-ts.mjs'), path.join(here, 'sqlite-writer-child.ts'), dbPath, String(historyLimit)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const acks: Ack[] = [];
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  // Every line read, including those still in the pipe after the kill, is an acknowledged write.
  for await (const line of createInterface({ input: child.stdout })) {
    acks.push(JSON.parse(line) as Ack);
    if (acks.length === count) child.kill('SIGKILL');
  }
  const signal = await exited;
  if (signal !== 'SIGKILL') throw new Error(`writer child ended without being killed (${String(signal)}): ${stderr}`);
  return acks;
}

describe('SqliteStore under kill -9', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sqlite-kill-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every acknowledged write and never reuses a revision', async () => {
    const file = path.join(dir, 'state.db');
    const historyLimit = 40;
    const first = await writeThenKill(file, historyLimit, 300);
    const second = await writeThenKill(file, historyLimit, 150);
    const acks = [...first, ...second];

    // Revisions are strictly increasing across the restart of the writer.
    for (let n = 1; n < acks.length; n++) expect(acks[n]!.revision).toBeGreaterThan(acks[n - 1]!.revision);
    expect(second[0]!.revision).toBeGreaterThan(first.at(-1)!.revision);

    const expected = new Map<string, string>();
    for (const ack of acks) {
      if (ack.op === 'delete') expected.delete(ack.key);
      else expected.set(ack.key, String(ack.i));
    }
    const lastAcked = acks.at(-1)!.revision;

    const store = await SqliteStore.open(file, { historyLimit });
    try {
      // At most the one write in flight at the kill committed beyond the acknowledged ones.
      expect([lastAcked, lastAcked + 1]).toContain(store.currentRevision());
      const atAck = await store.range({ prefix: '/registry/', revision: lastAcked });
      expect(new Map(atAck.items.map((item) => [item.key, (item.object.data as { i: string }).i]))).toEqual(expected);
      const next = await store.create('/registry/core/configmaps/ns/after-crash', { metadata: { name: 'after-crash' } });
      expect(next.revision).toBe(store.currentRevision());
      expect(next.revision).toBeGreaterThan(lastAcked);
    } finally {
      await store.close();
    }

    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    raw.close();
    // 450 fsync'd writes and two child starts: on a machine busy with disk work this takes ~20 s.
  }, 90_000);
});
