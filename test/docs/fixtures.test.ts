/**
 * The fixture lookup (test/helpers/fixtures.ts): KUBE_IDENTITY_FIXTURES or ../shared/fixtures, and
 * what a run without the folder does — skips with one line saying how many and where, and fails in CI.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_TESTDATA, fixturesDirFor } from '../helpers/fixtures.js';

const ROOT = process.cwd();

/** Runs one jest file in a child with the given environment. */
function jest(file: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'node_modules/jest/bin/jest.js'), '--ci=false', file],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules', ...env }, timeout: 170_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

it('finds the fixtures through KUBE_IDENTITY_FIXTURES, else ../shared/fixtures beside the checkout', () => {
  expect(fixturesDirFor({}, '/src/kube-identity')).toBe('/src/shared/fixtures');
  expect(fixturesDirFor({ KUBE_IDENTITY_FIXTURES: '/data/fixtures' }, '/src/kube-identity')).toBe('/data/fixtures');
  expect(fixturesDirFor({ KUBE_IDENTITY_FIXTURES: 'fx' }, '/src/kube-identity')).toBe('/src/kube-identity/fx');
  // This checkout: the folder given by the environment, or the default one.
  expect(API_TESTDATA).toBe(path.join(fixturesDirFor(process.env), 'k8s-api-testdata'));
});

describe('a run whose fixtures folder is missing', () => {
  let missing: string;
  beforeAll(() => {
    missing = path.join(mkdtempSync(path.join(os.tmpdir(), 'kube-identity-nofixtures-')), 'none');
  });
  afterAll(() => rmSync(path.dirname(missing), { recursive: true, force: true }));

  it('skips the tests that read them with one line saying how many and where, and passes the others', async () => {
    const { code, out } = await jest('src/apiserver/validation/object-meta.test.ts', { KUBE_IDENTITY_FIXTURES: missing, CI: '' });
    expect(code).toBe(0);
    const lines = out.split('\n').filter((l) => l.includes('SKIPPED'));
    expect(lines).toEqual([
      expect.stringContaining(
        `SKIPPED 1 test(s) in src/apiserver/validation/object-meta.test.ts: the upstream fixtures were not found at ${path.join(missing, 'k8s-api-testdata')} (set KUBE_IDENTITY_FIXTURES to the folder holding k8s-api-testdata)`,
      ),
    ]);
    expect(out).toMatch(/Tests:\s+1 skipped, \d+ passed/);
  }, 180_000);

  it('fails in CI', async () => {
    const { code, out } = await jest('src/apiserver/validation/object-meta.test.ts', { KUBE_IDENTITY_FIXTURES: missing, CI: 'true' });
    expect(code).not.toBe(0);
    expect(out).toContain(`upstream fixtures not found at ${path.join(missing, 'k8s-api-testdata')}: CI must run every suite`);
  }, 180_000);
});
