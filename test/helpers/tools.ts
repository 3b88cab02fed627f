/**
 * System tools that some suites start (etcd, prometheus, go, Python modules). `make test` installs them
 * (hack/ensure-tools.sh); where they are still missing a suite is skipped with one loud line, except in CI, where it fails.
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
 * A python3 that imports `module`, or undefined. Debian's python3-* packages land in /usr/bin/python3's path,
 * which is not the python3 first on PATH when a pyenv or venv is active, so both are tried.
 */
export function findPython(module: string): string | undefined {
  const candidates = [findTool('python3'), '/usr/bin/python3'].filter((p): p is string => p !== undefined);
  return candidates.find((python) => {
    try {
      execFileSync(python, ['-c', `import ${module}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
}

/** A tool is a command on PATH, or `python3:module` for a python3 that imports that module. */
function present(tool: string): boolean {
  const [command, module] = tool.split(':');
  return module === undefined ? findTool(tool) !== undefined : command === 'python3' && findPython(module) !== undefined;
}

/**
 * `describe` when every tool is there, otherwise `describe.skip` after saying what is missing.
 * In CI a missing tool throws, so the run fails instead of passing without the suite.
 */
export function describeWithTools(tools: readonly string[]): jest.Describe {
  const missing = tools.filter((t) => !present(t));
  if (missing.length === 0) return describe;
  const line = `missing system tools ${missing.join(', ')}: run hack/ensure-tools.sh (or make test) to install them`;
  if (process.env.CI) throw new Error(line);
  console.warn(`SKIPPED SUITE: ${line}`);
  return describe.skip;
}
