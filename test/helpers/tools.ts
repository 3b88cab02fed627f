/**
 * System tools that some suites start (etcd, prometheus, go). `make test` installs them (hack/ensure-tools.sh);
 * where they are still missing a suite is skipped with one loud line, except in CI, where it fails.
 */
import { execFileSync } from 'node:child_process';

/** The absolute path of `name` on PATH, or undefined. */
export function findTool(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * `describe` when every tool is there, otherwise `describe.skip` after saying what is missing.
 * In CI a missing tool throws, so the run fails instead of passing without the suite.
 */
export function describeWithTools(tools: readonly string[]): jest.Describe {
  const missing = tools.filter((t) => findTool(t) === undefined);
  if (missing.length === 0) return describe;
  const line = `missing system tools ${missing.join(', ')}: run hack/ensure-tools.sh (or make test) to install them`;
  if (process.env.CI) throw new Error(line);
  console.warn(`SKIPPED SUITE: ${line}`);
  return describe.skip;
}
