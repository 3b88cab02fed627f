/**
 * Where a `worker_threads` module is, for a Worker started beside it. Compiled, that is the `.js` file
 * next to the caller; run from the TypeScript sources (jest, `node --import test/helpers/register-ts.mjs`),
 * it is the `.ts` file, which the thread loads through the same TypeScript hooks the source runs use.
 */
import { execArgv } from 'node:process';
import { fileURLToPath } from 'node:url';

/** `from` is the caller's import.meta.url, `name` the worker module's file name without extension. */
export function workerModule(from: string, name: string): { url: URL; execArgv?: string[] } {
  if (!from.endsWith('.ts')) return { url: new URL(`./${name}.js`, from) };
  const hooks = fileURLToPath(new URL('../../test/helpers/register-ts.mjs', import.meta.url));
  const url = new URL(`./${name}.ts`, from);
  // A thread inherits its parent's node options, V8 flags such as --max-semi-space-size among them,
  // which Worker refuses when they are listed in execArgv: list them only to add the hooks.
  return execArgv.includes(hooks) ? { url } : { url, execArgv: [...execArgv, '--import', hooks] };
}
