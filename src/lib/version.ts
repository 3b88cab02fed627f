/**
 * What version of kube-identity this is, in one place so `kube-identity version`, the
 * kube_identity_build_info gauge, the startup log line and the API server's /version agree:
 * package.json's version, the git commit and build date the image build records in
 * build-info.json beside package.json (in a git checkout without it, the checkout's HEAD; elsewhere
 * "unknown" and ""), and the Node version.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { record, text } from './json.js';

export interface BuildVersion {
  /** package.json's version, e.g. 0.1.0. */
  version: string;
  /** Full git commit the image was built from (or the checkout's HEAD in a local build), or "unknown". */
  commit: string;
  /** RFC 3339 build time, or "" when not recorded. */
  buildDate: string;
  /** process.version, e.g. v20.19.0. */
  nodeVersion: string;
}

/** The file the Dockerfile writes from its GIT_COMMIT and BUILD_DATE build arguments. */
export const BUILD_INFO_FILE = 'build-info.json';

/** Reads the version of the package rooted at `root` (the directory holding package.json). */
export function readBuildVersion(root: string): BuildVersion {
  const pkg = record(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')));
  const infoFile = path.join(root, BUILD_INFO_FILE);
  const info = existsSync(infoFile) ? record(JSON.parse(readFileSync(infoFile, 'utf8'))) : {};
  return {
    version: text(pkg.version) || '0.0.0',
    commit: text(info.commit) || checkoutCommit(root) || 'unknown',
    buildDate: text(info.buildDate),
    nodeVersion: process.version,
  };
}

/** HEAD of the git checkout at `root` (a local build), or undefined when it is none or git is missing. */
function checkoutCommit(root: string): string | undefined {
  // .git is a directory in a clone and a file in a worktree.
  if (!existsSync(path.join(root, '.git'))) return undefined;
  return headFromFiles(path.join(root, '.git')) ?? headFromGit(root);
}

const COMMIT = /^[0-9a-f]{40,64}$/;

/**
 * HEAD read from the repository's files, as git itself resolves it: the worktree's HEAD, then the ref
 * it names, loose or packed, in the common directory. A file read instead of a `git` process at every
 * start (the main thread blocked 0.15 s on a loaded host); undefined where the layout is another
 * (reftable, a symbolic ref to a symbolic ref), and git is asked.
 */
function headFromFiles(dotGit: string): string | undefined {
  try {
    // A worktree's .git is a file naming its git directory.
    const link = statSync(dotGit).isFile() ? /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1] : undefined;
    const gitDir = link ? path.resolve(path.dirname(dotGit), link.trim()) : dotGit;
    const head = readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    if (COMMIT.test(head)) return head;
    const ref = /^ref: (refs\/\S+)$/.exec(head)?.[1];
    if (!ref) return undefined;
    const common = existsSync(path.join(gitDir, 'commondir')) ? path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;
    const loose = path.join(common, ref);
    if (existsSync(loose)) return matchCommit(readFileSync(loose, 'utf8').trim());
    const packed = existsSync(path.join(common, 'packed-refs')) ? readFileSync(path.join(common, 'packed-refs'), 'utf8') : '';
    return matchCommit(packed.split('\n').find((line) => line.endsWith(` ${ref}`))?.split(' ')[0] ?? '');
  } catch {
    return undefined;
  }
}

const matchCommit = (text: string): string | undefined => (COMMIT.test(text) ? text : undefined);

/** HEAD as `git rev-parse` says it (a layout headFromFiles does not read). */
function headFromGit(root: string): string | undefined {
  try {
    return matchCommit(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim());
  } catch {
    return undefined;
  }
}

/** The package root: the nearest directory above this module holding package.json (src/ or dist/src/). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('kube-identity: package.json not found above the installed code');
    dir = parent;
  }
  return dir;
}

let cached: BuildVersion | undefined;

/** This process's version, read once. */
export function buildVersion(): BuildVersion {
  cached ??= readBuildVersion(packageRoot());
  return cached;
}

/** One line for `--version`: `0.1.0 (commit abc1234, built 2026-01-01T00:00:00Z, node v20.19.0)`. */
export function versionLine(v: BuildVersion = buildVersion()): string {
  const parts = [`commit ${v.commit === 'unknown' ? v.commit : v.commit.slice(0, 12)}`];
  if (v.buildDate) parts.push(`built ${v.buildDate}`);
  parts.push(`node ${v.nodeVersion}`);
  return `${v.version} (${parts.join(', ')})`;
}
