/**
 * Replicas sharing a data directory (src/apiserver/server/credentials.ts): processes that set it up
 * at once agree on one CA and one set of keys, and a lock whose holder died holds nobody up.
 */
import { jest } from '@jest/globals';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CREDENTIAL_FILES, ensureCredentials, type ServerCredentials } from '../../src/apiserver/server/credentials.js';

const here = path.resolve(process.cwd(), 'test/apiserver');

// Each child loads the TypeScript sources: seconds apiece on a loaded host.
jest.setTimeout(120_000);

let dir: string;
const children: ChildProcessWithoutNullStreams[] = [];
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'credentials-lock-'));
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Child {
  process: ChildProcessWithoutNullStreams;
  /** The child's next line of output. */
  line(): Promise<string>;
}

function child(mode: 'ensure' | 'hold'): Child {
  const proc = spawn(process.execPath, ['--import', path.join(here, '../helpers/register-ts.mjs'), path.join(here, 'credentials-child.ts'), dir, mode]);
  children.push(proc);
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  return {
    process: proc,
    line: async () => {
      const next = await lines.next();
      if (next.done) throw new Error(`credentials child ended: ${stderr}`);
      return next.value;
    },
  };
}

it('gives two processes that set up one directory at once one CA and one set of keys, the serving certificate signed by that CA', async () => {
  // What an older release left when it crashed holding its lock: an empty file, long stale.
  writeFileSync(path.join(dir, '.credentials.lock'), '');
  utimesSync(path.join(dir, '.credentials.lock'), new Date(0), new Date(0));
  const starts = [child('ensure'), child('ensure')];
  for (const c of starts) expect(await c.line()).toBe('ready');
  for (const c of starts) c.process.stdin.end('go\n');
  const made = await Promise.all(starts.map(async (c) => JSON.parse(await c.line()) as ServerCredentials));

  const onDisk = Object.fromEntries(Object.entries(CREDENTIAL_FILES).map(([field, file]) => [field, readFileSync(path.join(dir, file), 'utf8')]));
  for (const credentials of made) expect(credentials).toEqual(onDisk);
  const ca = new X509Certificate(onDisk.caPem!);
  const serving = new X509Certificate(onDisk.servingCertPem!);
  expect(serving.verify(ca.publicKey)).toBe(true);
  expect(serving.checkPrivateKey(createPrivateKey(onDisk.servingKeyPem!))).toBe(true);
  expect(createPublicKey(onDisk.caKeyPem!).export({ format: 'jwk' })).toEqual(ca.publicKey.export({ format: 'jwk' }));
  // Every file was written whole: no temporary file is left.
  expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
});

it('waits while another process holds the lock, and goes on as soon as that process is killed', async () => {
  const holder = child('hold');
  expect(await holder.line()).toBe('held');
  let killed = false;
  const setUp = ensureCredentials(dir).then((credentials) => ({ credentials, killed }));
  // Long enough for a lock that did not exclude to let the setup through.
  await new Promise((resolve) => setTimeout(resolve, 500));
  killed = true;
  holder.process.kill('SIGKILL');
  const { credentials, killed: afterKill } = await setUp;
  expect(afterKill).toBe(true);
  expect(credentials.caPem).toBe(readFileSync(path.join(dir, CREDENTIAL_FILES.caPem), 'utf8'));
});
