/**
 * What version this is: from package.json and the build-info.json the image build writes, through
 * `kube-identity version`, `--version` and the kube_identity_build_info gauge; and every command's
 * --help ends with examples.
 */
import { jest } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CommanderError } from 'commander';
import { Registry } from 'prom-client';
import { buildProgram } from '../../src/cmd/program.js';
import { BUILD_INFO_FILE, buildVersion, readBuildVersion, versionLine } from '../../src/lib/version.js';
import { registerBuildInfo } from '../../src/metrics/build-info.js';

const run = promisify(execFile);
const ROOT = process.cwd();
const NODE_ARGS = ['--import', path.join(ROOT, 'test/helpers/register-ts.mjs'), path.join(ROOT, 'src/cmd/main.ts')];
const env = { ...process.env, NODE_OPTIONS: '' };
const pkgVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
/** The tests run in a git checkout (CI clones the repository): a local build reports its HEAD. */
const HEAD = git(ROOT, 'rev-parse', 'HEAD');

describe('readBuildVersion', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-version-'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'kube-identity', version: '1.2.3' }));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads package.json alone outside a git checkout: commit unknown, no build date', () => {
    expect(readBuildVersion(dir)).toEqual({ version: '1.2.3', commit: 'unknown', buildDate: '', nodeVersion: process.version });
  });

  it('reads the commit from git in a git checkout without build-info.json (a local build)', () => {
    git(dir, 'init', '-q');
    git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'first');
    const v = readBuildVersion(dir);
    expect(v.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(v.commit).toBe(git(dir, 'rev-parse', 'HEAD'));
    expect(versionLine(v)).toBe(`1.2.3 (commit ${v.commit.slice(0, 12)}, node ${process.version})`);
  });

  it("reads HEAD from the repository's files, not from a git process: loose, packed, detached, in a worktree", () => {
    const commit = (cwd: string, m: string): string => git(cwd, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', m);
    git(dir, 'init', '-q');
    commit(dir, 'first');
    const other = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-worktree-'));
    rmSync(other, { recursive: true });
    git(dir, 'worktree', 'add', '-q', '-b', 'side', other);
    writeFileSync(path.join(other, 'package.json'), JSON.stringify({ name: 'kube-identity', version: '1.2.3' }));
    commit(other, 'second');
    const commits = (): string[] => [readBuildVersion(dir).commit, readBuildVersion(other).commit];
    const path0 = process.env.PATH;
    try {
      const want = [git(dir, 'rev-parse', 'HEAD'), git(other, 'rev-parse', 'HEAD')];
      expect(want[0]).not.toBe(want[1]);
      // Without git on the PATH only the files can answer.
      process.env.PATH = '';
      expect(commits()).toEqual(want);
      process.env.PATH = path0;
      git(dir, 'pack-refs', '--all');
      git(dir, 'checkout', '-q', '--detach');
      process.env.PATH = '';
      expect(commits()).toEqual(want);
    } finally {
      process.env.PATH = path0;
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('prefers the commit the image build recorded', () => {
    git(dir, 'init', '-q');
    git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'first');
    writeFileSync(path.join(dir, BUILD_INFO_FILE), JSON.stringify({ commit: 'abcdef0', buildDate: '' }));
    expect(readBuildVersion(dir).commit).toBe('abcdef0');
  });

  it('adds the commit and build date the image build recorded', () => {
    const commit = '0123456789abcdef0123456789abcdef01234567';
    writeFileSync(path.join(dir, BUILD_INFO_FILE), JSON.stringify({ commit, buildDate: '2026-01-02T03:04:05Z' }));
    const v = readBuildVersion(dir);
    expect(v).toEqual({ version: '1.2.3', commit, buildDate: '2026-01-02T03:04:05Z', nodeVersion: process.version });
    expect(versionLine(v)).toBe(`1.2.3 (commit 0123456789ab, built 2026-01-02T03:04:05Z, node ${process.version})`);
  });
});

it('finds the package this module belongs to', () => {
  expect(buildVersion().version).toBe(pkgVersion);
});

it('exports kube_identity_build_info with version, commit and node_version', async () => {
  const registry = new Registry();
  registerBuildInfo(registry, { version: '1.2.3', commit: 'abc', buildDate: '', nodeVersion: 'v20.0.0' });
  registerBuildInfo(registry, { version: '1.2.3', commit: 'abc', buildDate: '', nodeVersion: 'v20.0.0' });
  expect(await registry.metrics()).toContain('kube_identity_build_info{version="1.2.3",commit="abc",node_version="v20.0.0"} 1\n');
});

/** Runs the command tree in-process and returns what it wrote to stdout (help exits through exitOverride). */
async function cli(args: string[]): Promise<string> {
  let out = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += chunk.toString();
    return true;
  });
  const program = buildProgram().exitOverride().configureOutput({ writeOut: (s) => (out += s) });
  for (const cmd of program.commands) cmd.exitOverride().configureOutput({ writeOut: (s) => (out += s) });
  try {
    await program.parseAsync(['node', 'kube-identity', ...args]);
  } catch (err) {
    if (!(err instanceof CommanderError) || err.exitCode !== 0) throw err;
  } finally {
    write.mockRestore();
  }
  return out;
}

describe('the command line', () => {
  it('prints the version with `version`, `version -o json` and `--version`', async () => {
    expect(await cli(['version'])).toBe(`kube-identity ${pkgVersion}\n  commit  ${HEAD}\n  built   unknown\n  node    ${process.version}\n`);
    expect(JSON.parse(await cli(['version', '-o', 'json']))).toEqual({ version: pkgVersion, commit: HEAD, buildDate: '', nodeVersion: process.version });
    expect(await cli(['--version'])).toBe(`${pkgVersion} (commit ${HEAD.slice(0, 12)}, node ${process.version})\n`);
    await expect(cli(['version', '-o', 'yaml'])).rejects.toThrow('--output must be text or json, not "yaml"');
  });

  it('answers `version` from the real entry point', async () => {
    const { stdout } = await run(process.execPath, [...NODE_ARGS, 'version', '-o', 'json'], { env });
    expect(JSON.parse(stdout)).toMatchObject({ version: pkgVersion, commit: HEAD, nodeVersion: process.version });
  }, 60_000);

  it('loads no Kubernetes client before a command runs: up\'s main thread never needs it', async () => {
    // Records the packages the program loads; `up`'s own imports are the command tree's.
    const hook = `import { registerHooks } from 'node:module'; const seen = new Set();
      registerHooks({ load(url, context, next) { const m = /node_modules\\/(@[^/]+\\/[^/]+|[^/]+)/.exec(url); if (m) seen.add(m[1]); return next(url, context); } });
      process.on('exit', () => process.stderr.write(JSON.stringify([...seen])));`;
    const { stdout, stderr } = await run(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, ...NODE_ARGS, '--version'], { env });
    expect(stdout).toContain(pkgVersion);
    const loaded = JSON.parse(stderr) as string[];
    expect(loaded).toContain('commander');
    expect(loaded).not.toContain('@kubernetes/client-node');
  }, 60_000);

  it('ends every command help with examples of that command', async () => {
    for (const cmd of ['up', 'apiserver', 'controller', 'demo', 'version']) {
      const help = await cli([cmd, '--help']);
      const examples = help.slice(help.lastIndexOf('\nExamples:\n') + 1).trim().split('\n').slice(1);
      expect(examples.length).toBeGreaterThanOrEqual(2);
      for (const line of examples) expect(line).toMatch(new RegExp(`^  (\\S+=\\S+ )?kube-identity ${cmd === 'version' ? '(version|--version)' : cmd}\\b`));
    }
  });
});
