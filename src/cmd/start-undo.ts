/**
 * A start that fails (a port taken, etcd unreachable) leaves the data directory as it found it: a
 * fresh CA and keys left behind would be reused by the next start as if they were the cluster's.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { DataDirInUseError } from '../apiserver/server/data-dir.js';

export interface StartUndo {
  /** Removes what was made in the directory since `watchStart`; the whole directory if it was made. */
  undo(err: unknown): void;
}

/** Notes what `dir` holds before a start. */
export function watchStart(dir: string): StartUndo {
  const existed = existsSync(dir);
  const before = new Set(existed ? readdirSync(dir) : []);
  return {
    undo(err) {
      // Another process owns the directory: what appeared there since is its, not ours.
      if (err instanceof DataDirInUseError || !existsSync(dir)) return;
      if (!existed) {
        rmSync(dir, { recursive: true, force: true });
        return;
      }
      for (const name of readdirSync(dir)) if (!before.has(name)) rmSync(`${dir}/${name}`, { recursive: true, force: true });
    },
  };
}
