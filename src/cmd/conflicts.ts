/**
 * What stands in the way of starting, in words a user can act on: another process on the data
 * directory or on a port, with the flag that picks another one.
 */
import { DataDirInUseError } from '../apiserver/server/data-dir.js';

/** The error to show for a failed start; `listenFlag` is the flag that chose the address that was busy. */
export function explainStartError(err: unknown, listenFlag: '--port' | '--metrics-bind-address'): unknown {
  if (err instanceof DataDirInUseError) return new Error(`${err.message}: stop it, or pass another --data-dir`);
  const e = err as (NodeJS.ErrnoException & { address?: string; port?: number }) | undefined;
  if (e?.code !== 'EADDRINUSE') return err;
  const free = listenFlag === '--port' ? '--port 0' : '--metrics-bind-address 127.0.0.1:0';
  return new Error(`${e.address ?? ''}:${e.port ?? ''} is already in use by another process: pass another ${listenFlag} (${free} picks a free port)`);
}
