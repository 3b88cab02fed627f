/**
 * The benchmarks' command lines: `--help` prints the usage and starts nothing (a benchmark starts
 * servers and runs for minutes), and a flag they do not know is an error, never a run with defaults.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = process.cwd();

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What the benchmark left in its temporary directory: a fleet run makes its data directory there first. */
  tmpEntries: string[];
}

/** Runs a bench script from source with a temporary directory of its own. */
function bench(script: string, args: string[]): Promise<Result> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-bench-cli-'));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', path.join(ROOT, 'test/helpers/register-ts.mjs'), path.join(ROOT, 'bench', script), ...args],
      // A run that did start is cut short: its output then fails the test, not the timeout.
      { env: { ...process.env, NODE_OPTIONS: '', TMPDIR: tmp }, timeout: 60_000, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const tmpEntries = readdirSync(tmp);
        rmSync(tmp, { recursive: true, force: true });
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr, tmpEntries });
      },
    );
  });
}

describe('bench command lines', () => {
  it('bench fleet --help prints the fleet usage and starts no fleet', async () => {
    const r = await bench('run.ts', ['fleet', '--help']);
    expect(r).toMatchObject({ code: 0, stderr: '', tmpEntries: [] });
    expect(r.stdout).toMatch(/^usage: npm run bench -- fleet/);
    expect(r.stdout).toContain('--nodes N[,N2...]');
    // Nothing but the usage: no table, no JSON line.
    expect(r.stdout).not.toMatch(/^fleet: |^\{/m);
  }, 90_000);

  it('bench --help lists the benchmarks and their flags; after a benchmark name too', async () => {
    const [top, named] = await Promise.all([bench('run.ts', ['--help']), bench('run.ts', ['e2e', '-h'])]);
    for (const r of [top, named]) {
      expect(r).toMatchObject({ code: 0, stderr: '', tmpEntries: [] });
      expect(r.stdout).toMatch(/^usage: npm run bench -- \[BENCHMARK\]/);
      expect(r.stdout).toContain('--storage=sqlite|memory|etcd');
    }
    expect(named.stdout).toBe(top.stdout);
  }, 90_000);

  it('refuses, in one line and with exit 2, an unknown flag, a flag of another benchmark and a bad value', async () => {
    const cases: [string[], RegExp][] = [
      [['fleet', '--nodes', '3', '--bogus'], /^bench fleet: Unknown option '--bogus' \(--help for usage\)$/],
      [['fleet', '--nodes', '3,x'], /^bench fleet: --nodes takes positive integers, got 3,x/],
      [['fleet', '--stop-after', 'reboot'], /^bench fleet: --stop-after takes join, steady, rotation or restart, got reboot/],
      [['fleet', '--no-rotation', '--stop-after', 'rotation'], /^bench fleet: --stop-after rotation and --no-rotation contradict each other/],
      [['pki', '--provider=aesgcm'], /^bench: --provider does not apply to pki/],
      [['e2e', '--storage=disk'], /^bench: --storage takes sqlite, memory or etcd, got disk/],
      [['api', '--runs=0'], /^bench: --runs takes an integer of at least 1, got "0"/],
    ];
    // Side by side, as the help runs above.
    const results = await Promise.all(cases.map(([args]) => bench('run.ts', args)));
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i] as Result;
      expect({ args, code: r.code, stdout: r.stdout, tmpEntries: r.tmpEntries }).toEqual({ args, code: 2, stdout: '', tmpEntries: [] });
      expect(r.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)]);
    }
  }, 180_000);

  it('the benchmarks that also run on their own take --help and refuse unknown flags', async () => {
    const [help, unknown] = await Promise.all([bench('cache.ts', ['--help']), bench('api.ts', ['--nodes=3'])]);
    expect(help).toMatchObject({ code: 0, stderr: '', tmpEntries: [] });
    expect(help.stdout).toMatch(/^usage: node dist\/bench\/cache\.js \[N \.\.\.\]/);
    expect(unknown).toMatchObject({ code: 2, stdout: '', stderr: "bench/api: Unknown option '--nodes' (--help for usage)\n" });
  }, 90_000);
});
