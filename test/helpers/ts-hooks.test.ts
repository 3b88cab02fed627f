/** The TypeScript hooks the CLI children run under: a source edited between two runs runs as edited, not from the cache. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI, CLI_ENV } from './cli.js';

const run = promisify(execFile);

it('transpiles a .ts file on load and re-transpiles it once its text changes', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ts-hooks-'));
  try {
    const file = path.join(dir, 'child.ts');
    const once = async (value: number): Promise<string> => {
      writeFileSync(file, `class Box {\n  constructor(readonly n: number) {}\n}\nconsole.log(new Box(${value}).n);\n`);
      return (await run(process.execPath, [CLI[0] as string, CLI[1] as string, file], { env: CLI_ENV })).stdout;
    };
    expect(await once(1)).toBe('1\n');
    expect(await once(2)).toBe('2\n');
    expect(await once(1)).toBe('1\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
