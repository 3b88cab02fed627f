/** Runs `kube-identity` from the TypeScript sources in a child process, as a user runs the program. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RawTarget } from './http.js';

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
    execFile(process.execPath, [...CLI, ...args], { env: { ...CLI_ENV, ...opts.env }, timeout: opts.timeoutMs ?? 150_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Extra node flags before the program (e.g. a test's `--import` hook) and environment of a child. */
export interface ChildOptions {
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts `kube-identity ...args` and resolves once `ready` finds what it waits for in the child's stdout
 * so far (a log line, a banner); rejects if the child exits first or takes more than 60 s.
 */
export function startCliChild<T>(args: string[], ready: (stdout: string) => T | undefined, opts: ChildOptions = {}): Promise<{ child: ChildProcess; ready: T; output(): string }> {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...CLI_ENV, ...opts.env } });
  let out = '';
  let err = '';
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    // Loading the TypeScript sources takes a while on a busy machine.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args[0]} did not start: ${out} ${err}`));
    }, 60_000);
    const check = (): void => {
      const found = ready(out);
      if (found === undefined) return;
      clearTimeout(timer);
      child.stdout?.off('data', check);
      resolve({ child, ready: found, output: () => out });
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      // A child that died before it was ready must not leave the 60 s timer holding the jest worker.
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited ${code}: ${err}`));
    });
  });
}

/** The first JSON log line of `stdout` whose msg is `msg`, parsed. */
export function logLine(stdout: string, msg: string): Record<string, unknown> | undefined {
  const line = stdout.split('\n').find((l) => l.includes(`"msg":${JSON.stringify(msg)}`));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}

/**
 * Starts `kube-identity apiserver --data-dir DIR --port 0 ...args` and resolves once it logged that
 * it is ready, with a raw-request target for it (admin client certificate and CA from the data directory).
 */
export async function startApiserverChild(dataDir: string, args: string[] = []): Promise<{ child: ChildProcess; target: RawTarget }> {
  const { child, ready } = await startCliChild(['apiserver', '--data-dir', dataDir, '--port', '0', ...args], (out) => logLine(out, 'api server ready'));
  const target = {
    url: String(ready.url),
    caPem: readFileSync(path.join(dataDir, 'ca.crt'), 'utf8'),
    admin: { certPem: readFileSync(path.join(dataDir, 'admin.crt'), 'utf8'), keyPem: readFileSync(path.join(dataDir, 'admin.key'), 'utf8') },
  };
  return { child, target };
}

/** SIGKILLs a child and waits for it to be gone. */
export function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export interface UpChild {
  child: ChildProcess;
  /** Everything `up` printed so far. */
  output(): string;
  /** A line of the banner, e.g. field('kubeconfig'). */
  field(name: string): string;
}

/** Starts `kube-identity up ...args` and resolves once it printed its banner. */
export async function startUpChild(args: string[], opts: ChildOptions = {}): Promise<UpChild> {
  const { child, output } = await startCliChild(['up', ...args], (out) => (out.includes('Press Ctrl-C to stop.') ? true : undefined), opts);
  const field = (name: string): string => {
    const line = output()
      .split('\n')
      .find((l) => l.trim().startsWith(name));
    if (!line) throw new Error(`banner has no ${name}: ${output()}`);
    return line.trim().slice(name.length).trim();
  };
  return { child, output, field };
}
