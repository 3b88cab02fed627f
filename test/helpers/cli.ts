/** Runs `kube-identity` from the TypeScript sources in a child process, as a user runs the program. */
import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = process.cwd();
/** node arguments that run src/cmd/main.ts: append the subcommand and its flags. */
export const CLI = ['--import', path.join(ROOT, 'test/helpers/register-ts.mjs'), path.join(ROOT, 'src/cmd/main.ts')];
/** The child's environment: jest's --experimental-vm-modules must not leak into it. */
export const CLI_ENV = { ...process.env, NODE_OPTIONS: '' };

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the program to its end (or `timeoutMs`) and returns its exit code and output. */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { env: { ...CLI_ENV, ...opts.env }, timeout: opts.timeoutMs ?? 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
