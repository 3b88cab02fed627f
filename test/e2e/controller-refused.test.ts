/**
 * A controller the API server refuses says so plainly: with a wrong token each refused call is an
 * error-level line "the API server refused these credentials: check --kubeconfig" (and it keeps
 * retrying with backoff); an unreadable kubeconfig is one line on stderr and exit code 1.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, CLI_ENV, runCli } from '../helpers/cli.js';
import { startTestServer, tokenKubeConfig, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

it('logs 401s as errors in plain words and keeps retrying', async () => {
  const kubeconfig = path.join(srv.dataDir, 'wrong-token.kubeconfig');
  writeFileSync(kubeconfig, tokenKubeConfig(srv, 'not-a-valid-token').exportConfig());
  const child = spawn(
    process.execPath,
    [...CLI, 'controller', '--kubeconfig', kubeconfig, '--leader-elect=false', '--metrics-bind-address', '127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: CLI_ENV },
  );
  const refusals: Record<string, unknown>[] = [];
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no two refusals logged: ${out}`)), 120_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const lines = out.split('\n').filter((l) => l.includes('the API server refused'));
      if (lines.length < 2) return;
      refusals.push(...lines.map((l) => JSON.parse(l) as Record<string, unknown>));
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => reject(new Error(`controller exited ${code}: ${out}`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  for (const line of refusals) {
    expect(line).toMatchObject({ level: 50, msg: 'the API server refused these credentials: check --kubeconfig', status: 401 });
  }
  expect(out).not.toMatch(/"level":30,[^\n]*Unauthorized/);
}, 180_000);

it('an unreadable kubeconfig is one line and exit code 1', async () => {
  const missing = path.join(srv.dataDir, 'no-such.kubeconfig');
  const { code, stdout, stderr } = await runCli(['controller', '--kubeconfig', missing]);
  expect(code).toBe(1);
  expect(stdout).toBe('');
  expect(stderr).toBe(`kube-identity: cannot read the kubeconfig (${missing}): ENOENT: no such file or directory, open '${missing}'\n`);
}, 180_000);
