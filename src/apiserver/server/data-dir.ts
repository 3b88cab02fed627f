/**
 * The data directory holds the cluster CA key, the admin credentials and the store (bootstrap-token
 * Secrets, service-account data, Secrets): anyone who can read it can join a node or act as admin.
 * So it is private to its owner (directory 0700, files 0600, certificates may stay 0644), and one
 * process uses it at a time, named in a pid file so a second one can say who is in the way.
 */
import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const PID_FILE = 'kube-identity.pid';

/** Certificates are public by nature; everything else in the directory is a secret or holds them. */
const PUBLIC_FILE = /\.crt$/;

/** The data directory is used by another live process. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`data directory ${dir} is already used by another kube-identity process (pid ${pid})`);
  }
}

/**
 * Removes group/other bits beyond `allowed`; returns whether the mode changed. A file gone since the
 * directory was listed is left: replicas sharing a data directory rename their temporary files into
 * place while another one starts and walks it.
 */
export function tighten(file: string, allowed: number): boolean {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat || (stat.mode & 0o777 & ~allowed) === 0) return false;
  try {
    chmodSync(file, stat.mode & 0o777 & allowed);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  return true;
}

/**
 * Creates `dir` 0700 or makes an existing one and everything in it private: directories 0700,
 * files 0600, certificates at most 0644. Returns the paths it had to tighten (for one warning).
 */
export function securePrivateDir(dir: string): string[] {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tightened: string[] = [];
  const walk = (d: string): void => {
    if (tighten(d, 0o700)) tightened.push(d);
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile() && tighten(p, PUBLIC_FILE.test(entry.name) ? 0o644 : 0o700)) tightened.push(p);
    }
  };
  walk(dir);
  return tightened;
}

/** Creates `file` empty and 0600 when it does not exist (SQLite gives its WAL and SHM the database file's mode). */
export function createPrivateFile(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
}

/** Whether `pid` is a live process that may be ours (EPERM: alive, another user's). */
export function isLiveProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A pid reused by an unrelated program after a crash does not hold the directory (Linux can tell).
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node');
  } catch {
    return true;
  }
}

/**
 * Claims `dir` for this process (DIR/kube-identity.pid, created exclusively). A pid file whose
 * process is gone (a crash, kill -9) is taken over. Returns the release function.
 */
export function lockDataDir(dir: string): () => void {
  const file = path.join(dir, PID_FILE);
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    if (Number.isInteger(pid) && pid > 0 && isLiveProcess(pid)) throw new DataDirInUseError(dir, pid);
    rmSync(file, { force: true });
  }
}
