/**
 * Child process for the credentials lock tests (credentials-lock.test.ts).
 * `ensure`: prints "ready", waits for a line on stdin, sets the directory up and prints the credentials as JSON.
 * `hold`: takes the credentials lock, prints "held", and keeps it until killed.
 * Usage: node --import ./test/helpers/register-ts.mjs test/apiserver/credentials-child.ts DIR ensure|hold
 */
import 'reflect-metadata';
import { once } from 'node:events';
import { ensureCredentials } from '../../src/apiserver/server/credentials.js';
import { withCredentialsLock } from '../../src/apiserver/server/credentials-lock.js';

const [dir, mode] = process.argv.slice(2);
if (!dir || (mode !== 'ensure' && mode !== 'hold')) throw new Error('usage: credentials-child DIR ensure|hold');
if (mode === 'ensure') {
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
  process.stdout.write(`${JSON.stringify(await ensureCredentials(dir))}\n`);
  process.exit(0);
} else {
  setInterval(() => undefined, 60_000);
  // In module scope: a promise nothing refers to is garbage, and with it the lock holder suspended on
  // it and its database handle, whose finalizer releases the lock (seen in CI: the waiter went on).
  const forever = new Promise<void>(() => undefined);
  await withCredentialsLock(dir, () => {
    process.stdout.write('held\n');
    return forever;
  });
}
