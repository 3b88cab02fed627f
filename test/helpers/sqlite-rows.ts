/**
 * The rows a query gives on a SQLite file (its server stopped), read in a child process with
 * node:sqlite: better-sqlite3's statements abort Node 24 when they are garbage-collected inside
 * jest's VM context. BLOBs come back as Buffers.
 */
import { execFileSync } from 'node:child_process';

const READ = `
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(process.argv[1], { readOnly: true });
const rows = db.prepare(process.argv[2]).all();
process.stdout.write(JSON.stringify(rows, (k, v) => (v instanceof Uint8Array ? { blob: Buffer.from(v).toString('base64') } : v)));
`;

export function sqliteRows(file: string, sql: string): Record<string, unknown>[] {
  const out = execFileSync(process.execPath, ['--no-warnings', '-e', READ, file, sql], { encoding: 'utf8' });
  return JSON.parse(out, (_k, v: unknown) => (v !== null && typeof v === 'object' && 'blob' in v ? Buffer.from(String(v.blob), 'base64') : v)) as Record<string, unknown>[];
}
