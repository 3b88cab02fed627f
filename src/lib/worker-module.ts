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
  const inherited = execArgv.includes(hooks) ? [] : ['--import', hooks];
  return { url: new URL(`./${name}.ts`, from), execArgv: [...execArgv, ...inherited] };
}
