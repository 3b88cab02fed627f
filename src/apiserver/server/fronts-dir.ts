/**
 * The directory that holds the TLS fronts' unix socket (fronts.ts): made with mkdtemp in the system's
 * temporary directory (mode 0700, this process's owner), named after this process's pid, and removed
 * when the fronts close. A process killed outright (SIGKILL, OOM) cannot remove it, so each start of
 * the fronts first removes the directories such processes left, and never one a live process uses:
 * a directory is stale only when it is ours (a real directory, owned by this user), its process is
 * gone, and nobody listens on its socket any more (a process in another pid namespace sharing /tmp
 * looks gone by its pid but still answers there). One with no socket yet may belong to a process
 * that is just starting: it is left for a minute.
 */
import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../log/logger.js';
import { isLiveProcess } from './data-dir.js';

const PREFIX = 'kube-identity-fronts-';
export const BACK_SOCKET = 'back.sock';
/** The back's i-th socket (fronts.ts listens on several): the first is BACK_SOCKET. */
export const backSocket = (i: number): string => (i === 0 ? BACK_SOCKET : `back-${i}.sock`);
/** `kube-identity-fronts-<pid>-<mkdtemp's six characters>`; earlier versions left the pid out. */
const NAME = /^kube-identity-fronts-(?:(\d+)-)?[A-Za-z0-9]{6}$/;
/** A directory without a socket this young may be a starting process's. */
const STARTING_MS = 60_000;

/** Whether a connection to `socketPath` is refused or finds no socket: nobody listens there. */
function nobodyListens(socketPath: string): Promise<'refused' | 'absent' | false> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : err.code === 'ENOENT' ? 'absent' : false));
  });
}

/** Whether `dir` (a name in `parent`) is a socket directory a dead process of this user left. */
async function isStale(parent: string, name: string): Promise<boolean> {
  const match = NAME.exec(name);
  if (!match) return false;
  const dir = path.join(parent, name);
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory() || st.uid !== process.getuid?.()) return false;
  if (match[1] !== undefined && isLiveProcess(Number(match[1]))) return false;
  const listening = await nobodyListens(path.join(dir, BACK_SOCKET));
  return listening === 'refused' || (listening === 'absent' && Date.now() - st.mtimeMs > STARTING_MS);
}

/** Removes the stale socket directories in `parent`, then makes this process's own. */
export async function makeFrontsDir(logger: Logger, parent = os.tmpdir()): Promise<string> {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(PREFIX) || !(await isStale(parent, name))) continue;
    rmSync(path.join(parent, name), { recursive: true, force: true });
    logger.info({ dir: path.join(parent, name) }, 'removed the TLS fronts\' socket directory of a process that is gone');
  }
  return mkdtempSync(path.join(parent, `${PREFIX}${process.pid}-`));
}
