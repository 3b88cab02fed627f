/**
 * The Makefile as a user drives it: flags reach the program through ARGS, and tsc runs only when
 * a source changed since the last build (its stamp), not on every `make run`. Dry runs (`make -n`)
 * with the stamp in a temporary directory, so the checkout's dist/ is left alone.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const make = (...args: string[]): string => execFileSync('make', ['--no-print-directory', '-n', ...args], { encoding: 'utf8' });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-make-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A dependencies stamp and, written after it, a build stamp: both newer than every source. */
function freshStamps(): string[] {
  const deps = path.join(dir, 'deps-stamp');
  const built = path.join(dir, 'build-stamp');
  writeFileSync(deps, '');
  writeFileSync(built, '');
  return [`STAMP=${deps}`, `BUILD_STAMP=${built}`];
}

it('passes ARGS to up and demo', () => {
  const stamps = freshStamps();
  expect(make('run', ...stamps, 'ARGS=--port 7443')).toContain('node dist/src/cmd/main.js up --port 7443');
  expect(make('demo', ...stamps, 'ARGS=--node n1')).toContain('demo --kubeconfig .kube-identity/kubeconfig --node n1');
});

it('compiles only when a source is newer than the last build', () => {
  const [deps = '', built = ''] = freshStamps();
  // The dependencies' stamp is fresh too: this is about sources, not about npm ci.
  expect(make('run', deps, built)).not.toContain('npm run build');
  const stale = path.join(dir, 'stale');
  writeFileSync(stale, '');
  utimesSync(stale, new Date('2000-01-01'), new Date('2000-01-01'));
  expect(make('run', `BUILD_STAMP=${stale}`, deps)).toContain('npm run build');
});
