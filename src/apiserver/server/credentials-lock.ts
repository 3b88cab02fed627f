/**
 * How replicas sharing a data directory make its credentials without racing: one lock for whoever
 * finds a piece missing, and every file written whole (credentials.ts).
 */
import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createPrivateFile } from './data-dir.js';

const LOCK_FILE = '.credentials.lock';

/**
 * Runs `create` holding DIR/.credentials.lock: SQLite's exclusive lock on it, a POSIX record lock
 * (Node has no flock), which the kernel releases when its holder dies, kill -9 included. So a lock is
 * never stale: with a file made O_EXCL, one left by a crash had to be judged stale by its age and
 * removed, and two replicas removing it at once could both go on to make a CA. The file stays, empty:
 * removing it would let one replica lock the removed file while another locks a new one.
 */
export async function withCredentialsLock<T>(dir: string, create: () => Promise<T>): Promise<T> {
  const file = path.join(dir, LOCK_FILE);
  createPrivateFile(file);
  // Loaded only here (a first start, a renewal): 100-200 ms of a start that finds every file.
  const { default: Database } = await import('better-sqlite3');
  // No busy timeout: SQLite would wait on the event loop's thread; the loop polls instead.
  const db = new Database(file, { timeout: 0 });
  try {
    for (;;) {
      try {
        db.exec('BEGIN EXCLUSIVE');
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    try {
      return await create();
    } finally {
      db.exec('ROLLBACK');
    }
  } finally {
    db.close();
  }
}

/**
 * Writes `text` to `file` whole or not at all (a temporary file, then rename): another replica, or
 * whoever waits for the file, may read it meanwhile. The temporary name is random, not the pid:
 * replicas in containers sharing the directory may have the same pid.
 */
export function writeWhole(file: string, text: string, mode: number): void {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, text, { mode, flag: 'wx' });
  renameSync(tmp, file);
}
