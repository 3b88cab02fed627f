/**
 * Runs the real kubectl binary against a test server: one server per test file, a private
 * discovery cache under its data directory, and results that never throw (exit code included).
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestServer } from '../helpers/server.js';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  env?: Record<string, string>;
  input?: string;
}

function baseArgs(srv: TestServer): string[] {
  return ['--kubeconfig', srv.kubeconfigPath, '--cache-dir', path.join(srv.dataDir, 'kubectl-cache')];
}

export function kubectlWith(srv: TestServer, args: string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      [...baseArgs(srv), ...args],
      { timeout: 30_000, env: { ...process.env, ...opts.env } },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** A kubectl bound to one server. */
export const kubectlFor =
  (srv: TestServer) =>
  (...args: string[]): Promise<KubectlResult> =>
    kubectlWith(srv, args);

/** Writes a manifest into the server's data directory and returns its path. */
export function manifest(srv: TestServer, name: string, text: string | object): string {
  const file = path.join(srv.dataDir, name);
  fs.writeFileSync(file, typeof text === 'string' ? text : JSON.stringify(text, null, 2));
  return file;
}

/** A long-running kubectl (`get -w`) whose stdout lines can be awaited. */
export class KubectlStream {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private stderrText = '';
  private waiters: (() => void)[] = [];

  constructor(srv: TestServer, args: string[]) {
    this.child = spawn('kubectl', [...baseArgs(srv), ...args]);
    this.child.stdout.on('data', (d: Buffer) => {
      this.buffer += d.toString('utf8');
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderrText += d.toString('utf8');
    });
  }

  get stderr(): string {
    return this.stderrText;
  }

  lines(): string[] {
    return this.buffer.split('\n').filter((l) => l !== '');
  }

  /** Resolves with the output lines once `count` complete lines have arrived (or the timeout ends the wait). */
  async waitForLines(count: number, timeoutMs = 15_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.buffer.split('\n').length - 1 < count && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.lines();
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) {
        resolve();
        return;
      }
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}
