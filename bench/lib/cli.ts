/**
 * The benchmarks' command lines, parsed strictly (node:util parseArgs): a benchmark takes minutes and
 * starts servers, so `--help` prints the usage and exits 0 before anything starts, and a flag it does
 * not know, or a value it cannot use, is an error (one line on stderr, exit 2) rather than a run with
 * the default in its place.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

export interface CliSpec {
  /** The command as a user types it, e.g. `bench fleet`: the errors start with it. */
  command: string;
  /** What `--help` prints. */
  usage: string;
  options: ParseArgsOptionsConfig;
  /** How many positional arguments it takes (a benchmark's name, a file); none by default. */
  positionals?: number;
}

export interface BenchArgs {
  positionals: string[];
  /** The flags given, by name. */
  given: string[];
  string(name: string): string | undefined;
  flag(name: string): boolean;
  /** A number flag, undefined when absent; anything but a number of at least `min` (an integer if asked) is an error. */
  number(name: string, opts?: { min?: number; integer?: boolean }): number | undefined;
  /** Ends the process as a bad command line does: one line on stderr, exit 2. */
  fail(message: string): never;
}

export function parseBenchArgs(argv: string[], spec: CliSpec): BenchArgs {
  const fail = (message: string): never => {
    process.stderr.write(`${spec.command}: ${message} (--help for usage)\n`);
    process.exit(2);
  };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options: { ...spec.options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true });
  } catch (err) {
    // Node's own hint about `--` after an unknown option does not help here.
    return fail((err as Error).message.replace(/\. To specify a positional argument[^]*$/, ''));
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help === true) {
    process.stdout.write(`${spec.usage.trimEnd()}\n`);
    process.exit(0);
  }
  if (parsed.positionals.length > (spec.positionals ?? 0)) fail(`unexpected argument ${JSON.stringify(parsed.positionals[spec.positionals ?? 0])}`);
  const string = (name: string): string | undefined => {
    const v = values[name];
    return typeof v === 'string' ? v : undefined;
  };
  return {
    positionals: parsed.positionals,
    given: Object.keys(values).filter((k) => values[k] !== undefined),
    string,
    flag: (name) => values[name] === true,
    number(name, opts = {}) {
      const text = string(name);
      if (text === undefined) return undefined;
      const n = Number(text);
      const min = opts.min ?? 0;
      if (text.trim() === '' || !Number.isFinite(n) || n < min || (opts.integer && !Number.isInteger(n))) {
        fail(`--${name} takes ${opts.integer ? 'an integer' : 'a number'} of at least ${min}, got ${JSON.stringify(text)}`);
      }
      return n;
    },
    fail,
  };
}
