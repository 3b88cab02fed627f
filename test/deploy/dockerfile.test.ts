/**
 * The image records the commit it was built from: the Dockerfile's build stage runs
 * hack/build-info.mjs with its GIT_COMMIT and BUILD_DATE arguments, and `kube-identity version`
 * in the result reports them. The RUN line is taken from the Dockerfile and run by sh in a copy
 * of the package, with the arguments in the environment as a builder sets them, so an edit to
 * either side that breaks the pair fails here. (`make image-check` builds the real image.)
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI_ENV } from '../helpers/cli.js';

const run = promisify(execFile);
const ROOT = process.cwd();
const SCRIPT = 'hack/build-info.mjs';

interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's stages: instructions with continuation lines joined, comments dropped. */
function stages(text: string): Instruction[][] {
  const out: Instruction[][] = [];
  const logical = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  for (const line of logical) {
    const [op = '', ...rest] = line.split(/\s+/);
    const ins = { op: op.toUpperCase(), args: rest.join(' ') };
    if (ins.op === 'FROM') out.push([]);
    out.at(-1)?.push(ins);
  }
  return out;
}

const dockerfile = stages(readFileSync('Dockerfile', 'utf8'));
const runtime = dockerfile.at(-1) ?? [];
const copied = runtime.find((i) => i.op === 'COPY' && i.args.includes('build-info.json'));
const buildStageName = /--from=(\S+)/.exec(copied?.args ?? '')?.[1];
const build = dockerfile.find((s) => s[0]?.args.endsWith(` AS ${buildStageName}`)) ?? [];
const at = (pred: (i: Instruction) => boolean): number => build.findIndex(pred);
const runIndex = at((i) => i.op === 'RUN' && i.args.includes(SCRIPT));
const argDefault = (name: string): string | undefined => build.find((i) => i.op === 'ARG' && i.args.startsWith(`${name}=`))?.args.slice(name.length + 1);

describe('the Dockerfile', () => {
  it('copies build-info.json from the build stage beside package.json in the runtime stage', () => {
    expect(copied?.args).toMatch(/\/package\.json \S*build-info\.json \.\/$/);
    expect(build.length).toBeGreaterThan(0);
  });

  it('runs the build-info script after copying it in, with GIT_COMMIT and BUILD_DATE declared before', () => {
    expect(runIndex).toBeGreaterThan(0);
    expect(build[runIndex]?.args).toContain('"$GIT_COMMIT" "$BUILD_DATE"');
    expect(at((i) => i.op === 'COPY' && i.args.startsWith(`${SCRIPT} `))).toBeLessThan(runIndex);
    for (const name of ['GIT_COMMIT', 'BUILD_DATE']) {
      const declared = at((i) => i.op === 'ARG' && i.args.startsWith(`${name}=`));
      expect(declared).toBeGreaterThanOrEqual(0);
      expect(declared).toBeLessThan(runIndex);
    }
    // The build context is cut down by .dockerignore: the script must be let in.
    expect(readFileSync('.dockerignore', 'utf8').split('\n')).toContain(`!${SCRIPT}`);
  });

  it("builds and runs on the Node major that make test and .ci/run pin (hack/ensure-node.sh), one package.json admits", async () => {
    const pinned = (await run('hack/ensure-node.sh', ['--version'])).stdout.trim();
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const major = pinned.split('.')[0];
    const text = readFileSync('Dockerfile', 'utf8');
    expect(/^ARG NODE_VERSION=(\S+)$/m.exec(text)?.[1]).toBe(major);
    expect(build[0]?.args).toBe('node:${NODE_VERSION}-bookworm-slim AS build');
    expect(runtime[0]?.args).toBe('gcr.io/distroless/nodejs${NODE_VERSION}-debian12:nonroot');
    const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines.split('||').map((r) => r.trim())).toContain(`>=${major}`);
  });
});

describe('the build-info step, run as the Dockerfile runs it', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-image-'));
    for (const p of ['package.json', 'src', SCRIPT]) cpSync(p, path.join(dir, p), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The Dockerfile's RUN line in the copy, with the build arguments a builder would pass. */
  const buildStep = (args: Record<string, string>) => run('/bin/sh', ['-c', build[runIndex]?.args ?? 'false'], { cwd: dir, env: { ...CLI_ENV, ...args } });
  const version = async (...flags: string[]): Promise<string> => {
    const main = path.join(dir, 'src/cmd/main.ts');
    const { stdout } = await run(process.execPath, ['--import', path.join(ROOT, 'test/helpers/register-ts.mjs'), main, 'version', ...flags], { env: CLI_ENV });
    return stdout;
  };

  it('makes `kube-identity version` report the commit and build date given', async () => {
    const commit = '0123456789abcdef0123456789abcdef01234567';
    await buildStep({ GIT_COMMIT: commit, BUILD_DATE: '2026-11-25T06:00:00Z' });
    expect(JSON.parse(await version('-o', 'json'))).toMatchObject({ commit, buildDate: '2026-11-25T06:00:00Z' });
    expect(await version()).toMatch(new RegExp(`\\n  commit  ${commit}\\n  built   2026-11-25T06:00:00Z\\n`));
  }, 90_000);

  it('records "unknown" with the Dockerfile\'s default arguments', async () => {
    await buildStep({ GIT_COMMIT: argDefault('GIT_COMMIT') ?? 'missing', BUILD_DATE: argDefault('BUILD_DATE') ?? 'missing' });
    expect(JSON.parse(await version('-o', 'json'))).toMatchObject({ commit: 'unknown', buildDate: '' });
  }, 60_000);

  it('fails the build on a commit or date that is not one', async () => {
    await expect(buildStep({ GIT_COMMIT: 'v0.1.0-dirty', BUILD_DATE: '' })).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('commit must be a hex git commit') });
    await expect(buildStep({ GIT_COMMIT: 'abcdef0', BUILD_DATE: 'Wed Nov 25 06:00:00 UTC 2026' })).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('build date must be RFC 3339') });
  });
});
