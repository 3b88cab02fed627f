/**
 * Node module hooks that run the project's TypeScript sources in a plain `node` child process
 * (tests that must kill a real process cannot run it inside jest). Each .ts file is transpiled
 * on load, without type checking; relative `.js` imports resolve to the `.ts` file next to them.
 * Transpiling every source took ~4 s of CPU per child, so the output is cached on disk by content.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/ts-hooks/', import.meta.url));
// A new TypeScript, new options or a change to these hooks must not reuse old output.
const CACHE_SALT = createHash('sha256')
  .update(readFileSync(require.resolve('typescript/package.json')))
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .digest();

let ts;

export function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.startsWith('file:')) {
    const candidate = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    if (!existsSync(new URL(specifier, context.parentURL)) && existsSync(candidate)) {
      return { url: candidate.href, shortCircuit: true };
    }
  }
  return nextResolve(specifier, context);
}

export function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const fileName = fileURLToPath(url);
  const input = readFileSync(fileName, 'utf8');
  const cached = path.join(CACHE_DIR, createHash('sha256').update(CACHE_SALT).update(input).digest('hex') + '.js');
  if (existsSync(cached)) return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true };
  ts ??= require('typescript');
  const { outputText } = ts.transpileModule(input, {
    fileName,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false },
  });
  // Written aside and renamed, so a child reading it alongside never sees half a file; one name per
  // thread, as up's controller thread may transpile the same file beside its main thread.
  mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = `${cached}.${process.pid}.${threadId}.tmp`;
  writeFileSync(tmp, outputText);
  renameSync(tmp, cached);
  return { format: 'module', source: outputText, shortCircuit: true };
}
