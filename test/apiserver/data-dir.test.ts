/** The data directory is private and claimed by one process at a time (src/apiserver/server/data-dir.ts). */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataDirInUseError, lockDataDir, PID_FILE, securePrivateDir, tighten } from '../../src/apiserver/server/data-dir.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-datadir-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (p: string): string => (statSync(p).mode & 0o777).toString(8);

it('creates a missing directory 0700 and tightens looser ones, reporting what it changed', () => {
  const fresh = path.join(dir, 'a', 'b');
  expect(securePrivateDir(fresh)).toEqual([]);
  expect(mode(fresh)).toBe('700');

  chmodSync(dir, 0o755);
  const files = { 'store.db': 0o644, 'ca.crt': 0o666, 'admin.crt': 0o644, 'sa.key': 0o600 };
  for (const [f, m] of Object.entries(files)) {
    writeFileSync(path.join(dir, f), 'x');
    chmodSync(path.join(dir, f), m);
  }
  mkdirSync(path.join(dir, 'sub'), { mode: 0o777 });
  chmodSync(path.join(dir, 'sub'), 0o777);
  const changed = securePrivateDir(dir);
  expect(changed.sort()).toEqual([dir, path.join(dir, 'ca.crt'), path.join(dir, 'store.db'), path.join(dir, 'sub')].sort());
  expect([mode(dir), mode(path.join(dir, 'store.db')), mode(path.join(dir, 'ca.crt')), mode(path.join(dir, 'admin.crt'))]).toEqual(['700', '600', '644', '644']);
  expect(mode(path.join(dir, 'sub'))).toBe('700');
  expect(securePrivateDir(dir)).toEqual([]);
});

it('refuses a directory held by a live process, naming its pid', () => {
  const pid = process.pid;
  writeFileSync(path.join(dir, PID_FILE), `${pid}\n`);
  expect(() => lockDataDir(dir)).toThrow(new DataDirInUseError(dir, pid));
  expect(() => lockDataDir(dir)).toThrow(`data directory ${dir} is already used by another kube-identity process (pid ${pid})`);
});

it('takes over the pid file of a process that is gone, and releases it', () => {
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  writeFileSync(path.join(dir, PID_FILE), gone.stdout.toString());
  const release = lockDataDir(dir);
  expect(readFileSync(path.join(dir, PID_FILE), 'utf8')).toBe(`${process.pid}\n`);
  expect(mode(path.join(dir, PID_FILE))).toBe('600');
  expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
  release();
  lockDataDir(dir)();
});

it("leaves a file that is gone since the directory was listed (another replica's renamed temporary file)", () => {
  const gone = path.join(dir, 'apiserver.crt.123.tmp');
  expect(tighten(gone, 0o644)).toBe(false);
  writeFileSync(gone, 'x');
  chmodSync(gone, 0o666);
  expect(tighten(gone, 0o644)).toBe(true);
  expect(mode(gone)).toBe('644');
});
