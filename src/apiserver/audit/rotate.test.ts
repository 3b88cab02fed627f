/** RotatingFile's age limit and compression, as lumberjack applies them (size and count are in test/audit/rotation.test.ts). */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { RotatingFile } from './rotate.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'audit-rotate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('removes backups older than maxage by the timestamp in their names, and gzips the backups it keeps', () => {
  const now = new Date('2026-11-26T12:00:00.000Z');
  // Ten days old, two days old, and a file that is not a backup of this log.
  writeFileSync(path.join(dir, 'audit-2026-11-16T12-00-00.000.log'), 'old\n');
  writeFileSync(path.join(dir, 'audit-2026-11-24T12-00-00.000.log'), 'recent\n');
  writeFileSync(path.join(dir, 'other-2026-11-01T00-00-00.000.log'), 'not ours\n');
  const file = new RotatingFile({ filename: path.join(dir, 'audit.log'), maxSizeMb: 1, maxBackups: 0, maxAgeDays: 7, compress: true, now: () => now });
  file.open();
  const line = Buffer.from(`${'x'.repeat(600 * 1024)}\n`);
  file.write(line);
  file.write(line); // past 1 MB: the first line goes to a backup named for now
  file.close();

  expect(readdirSync(dir).sort()).toEqual(['audit-2026-11-24T12-00-00.000.log.gz', 'audit-2026-11-26T12-00-00.000.log.gz', 'audit.log', 'other-2026-11-01T00-00-00.000.log']);
  // Buffers compared with equals(): toEqual walks 600 kB byte by byte.
  expect(gunzipSync(readFileSync(path.join(dir, 'audit-2026-11-26T12-00-00.000.log.gz'))).equals(line)).toBe(true);
  expect(gunzipSync(readFileSync(path.join(dir, 'audit-2026-11-24T12-00-00.000.log.gz'))).toString()).toBe('recent\n');
  expect(readFileSync(path.join(dir, 'audit.log')).equals(line)).toBe(true);
});
