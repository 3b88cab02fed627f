/**
 * The SQLite thread's commit of merged groups, driven directly (as its message loop does) so the
 * merge is certain: groups queued together share one transaction; when that fails, the groups
 * before the failing one still commit and the ones after it fail, as they would have one by one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { commitGroups, commitTransaction, openDatabase, type CommitRequest, type Reply } from './sqlite-worker.js';

let dir: string;
let db: Database.Database;
let channel: MessageChannel;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sqlite-worker-'));
  // A quota small enough for one large group to overflow it: a real commit failure (SQLITE_FULL).
  db = openDatabase({ path: path.join(dir, 'state.db'), historyLimit: 100, busyTimeoutMs: 100, quotaBytes: 96 * 1024 });
  channel = new MessageChannel();
});
afterEach(() => {
  db.close();
  channel.port1.close();
  rmSync(dir, { recursive: true, force: true });
});

function replies(port: MessagePort): Reply[] {
  const out: Reply[] = [];
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) out.push(m.message as Reply);
  return out;
}

/** A group of `n` writes of `size` bytes each, at the revisions after `after`. */
function group(id: number, after: number, n: number, size = 10): CommitRequest {
  const rows = Array.from({ length: n }, (_, i) => ({ revision: after + i + 1, key: `/r/g${id}-${i}`, type: 'ADDED' as const, value: 'x'.repeat(size), prev: null }));
  return { type: 'commit', id, rows, revision: after + n };
}

const stored = (): { revision: number; key: string }[] => db.prepare('SELECT revision, key FROM log ORDER BY revision').all() as { revision: number; key: string }[];
const fileRevision = (): unknown => db.prepare("SELECT value FROM meta WHERE name = 'revision'").pluck().get();

describe('SQLite thread: merged commit groups', () => {
  it('commits the groups queued together in one transaction, each write at its own revision', () => {
    const commit = commitTransaction(db);
    const groups = [group(1, 0, 2), group(2, 2, 1), group(3, 3, 3)];
    expect(commitGroups(channel.port2, commit, groups, 0)).toBe(6);
    expect(replies(channel.port1)).toEqual([3]);
    expect(stored().map((r) => r.revision)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stored()[2]).toEqual({ revision: 3, key: '/r/g2-0' });
    expect(fileRevision()).toBe(6);
  });

  it('commits the groups before a failing one, fails it with its error and fails the groups behind it', () => {
    const commit = commitTransaction(db);
    const groups = [group(1, 0, 2), group(2, 2, 20, 8000), group(3, 22, 1), group(4, 23, 1)];
    expect(commitGroups(channel.port2, commit, groups, 0)).toBe(2);
    const answers = replies(channel.port1);
    expect(answers[0]).toBe(1);
    expect(answers[1]).toMatchObject({ type: 'failed', id: 2, code: 'SQLITE_FULL' });
    // Prepared against group 2's writes, so they must not land without it.
    expect(answers.slice(2)).toEqual([
      { type: 'failed', id: 3, message: expect.stringMatching(/does not follow revision 2/) },
      { type: 'failed', id: 4, message: expect.stringMatching(/does not follow revision 2/) },
    ]);
    expect(stored().map((r) => r.revision)).toEqual([1, 2]);
    expect(fileRevision()).toBe(2);

    // The failed groups' revisions are free again: the writes sent next start right after group 1.
    expect(commitGroups(channel.port2, commit, [group(5, 2, 1), group(6, 3, 1)], 2)).toBe(4);
    expect(replies(channel.port1)).toEqual([6]);
    expect(stored().map((r) => r.key)).toEqual(['/r/g1-0', '/r/g1-1', '/r/g5-0', '/r/g6-0']);
  });

  it('refuses a group that skips revisions, even alone', () => {
    const commit = commitTransaction(db);
    expect(commitGroups(channel.port2, commit, [group(1, 5, 1)], 0)).toBe(0);
    expect(replies(channel.port1)).toEqual([{ type: 'failed', id: 1, message: expect.stringMatching(/at revision 6 does not follow revision 0/) }]);
    expect(stored()).toEqual([]);
  });
});
