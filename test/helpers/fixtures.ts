/**
 * Upstream golden fixtures (kubernetes' k8s-api-testdata) are not copied into the repository: they
 * are read from $KUBE_IDENTITY_FIXTURES, by default ../shared/fixtures beside the checkout. Where
 * they are missing, the tests that read them are skipped with one loud line per test file saying
 * how many and where the fixtures were expected; in CI (env CI set) a missing folder fails instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The fixtures folder for an environment (exported for its own test). */
export function fixturesDirFor(env: NodeJS.ProcessEnv, repoRoot = REPO_ROOT): string {
  return path.resolve(repoRoot, env.KUBE_IDENTITY_FIXTURES || '../shared/fixtures');
}

/** Where the upstream API test data is read from. */
export const API_TESTDATA = path.join(fixturesDirFor(process.env), 'k8s-api-testdata');
const present = fs.existsSync(API_TESTDATA);

/** The absolute path of one upstream fixture file. */
export const fixturePath = (name: string): string => path.join(API_TESTDATA, name);

/** A fixture as bytes, text or parsed JSON. */
export const readFixture = (name: string): Buffer => fs.readFileSync(fixturePath(name));
export const readFixtureText = (name: string): string => fs.readFileSync(fixturePath(name), 'utf8');
export const readFixtureJson = <T = Record<string, unknown>>(name: string): T => JSON.parse(readFixtureText(name)) as T;

/** Fixture file names ending in `suffix` ([] when the folder is missing: their tests are skipped). */
export const fixtureFiles = (suffix: string): string[] => (present ? fs.readdirSync(API_TESTDATA).filter((f) => f.endsWith(suffix)) : []);

export function missingFixturesLine(dir: string, skipped: number, file: string): string {
  return `SKIPPED ${skipped} test(s) in ${file}: the upstream fixtures were not found at ${dir} (set KUBE_IDENTITY_FIXTURES to the folder holding k8s-api-testdata)`;
}

let skipped = 0;

function noteSkipped(count: number): void {
  if (process.env.CI) throw new Error(`upstream fixtures not found at ${API_TESTDATA}: CI must run every suite (set KUBE_IDENTITY_FIXTURES)`);
  // Collection is synchronous: the line is printed once, after the whole file has been collected.
  // Straight to stderr: jest drops the console output of a file whose tests were all skipped.
  if (skipped === 0)
    queueMicrotask(() => {
      const file = path.relative(REPO_ROOT, expect.getState().testPath ?? '');
      process.stderr.write(`${missingFixturesLine(API_TESTDATA, skipped, file)}\n`);
    });
  skipped += count;
}

/** `it` for a test that reads fixtures. */
export function itWithFixtures(name: string, fn: jest.ProvidesCallback): void {
  if (present) return it(name, fn);
  noteSkipped(1);
  // Skipped only outside CI, when ../shared is not beside the clone, after one line saying so (CI fails instead).
  it.skip(name, fn);
}

/** `describe` for a block whose tests read fixtures; when they are missing it is skipped, its tests counted. */
export function describeWithFixtures(name: string, fn: () => void): void {
  if (present) return describe(name, fn);
  let count = 0;
  const realIt = globalThis.it;
  const counting = Object.assign((...args: Parameters<jest.It>) => {
    count++;
    return realIt(...args);
  }, realIt);
  counting.each = ((table: readonly unknown[]) => {
    count += table.length;
    // Jest refuses an empty table even in a skipped block; with no fixtures there are no rows.
    return table.length === 0 ? () => undefined : realIt.each(table as unknown[]);
  }) as jest.It['each'];
  // Skipped only outside CI, when ../shared is not beside the clone, after one line saying so (CI fails instead).
  describe.skip(name, () => {
    globalThis.it = counting as jest.It;
    try {
      fn();
    } finally {
      globalThis.it = realIt;
    }
  });
  noteSkipped(count);
}
