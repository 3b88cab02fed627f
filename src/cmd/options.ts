/**
 * Commander glue for the config tables in src/config: every command declares its flags from a
 * schema, passes on only the flags the user gave (so env and file can still apply), and stops with
 * every problem listed at once, exit code 2, when the configuration is wrong.
 */
import type { Command } from 'commander';
import { ConfigError, type ConfigSources } from '../config/load.js';
import { describeConfig, type ConfigSchema } from '../config/schema.js';

/** Declares `--config` and one flag per schema entry, with its env variable and default in the help. */
export function addConfigOptions(cmd: Command, schema: ConfigSchema): Command {
  cmd.option('--config <file>', 'YAML configuration file with the camelCase keys below (flags and env win)');
  for (const d of describeConfig(schema)) {
    const flag = d.type === 'bool' ? `${d.flag} [bool]` : `${d.flag} <${d.type}>`;
    cmd.option(flag, `${d.description} [env ${d.env}; default ${JSON.stringify(d.default)}]`);
  }
  return cmd;
}

/** The config sources of a command: flags as commander parsed them (only those given), env, file. */
export function configSources(opts: Record<string, unknown>, schema: ConfigSchema): ConfigSources {
  const flags: Record<string, unknown> = {};
  for (const key of Object.keys(schema)) if (opts[key] !== undefined) flags[key] = opts[key];
  return { flags, env: process.env, file: typeof opts.config === 'string' ? opts.config : undefined };
}

/** Runs a config loader; a ConfigError ends the process with its problems and exit code 2. */
export async function loadOrExit<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`kube-identity: ${err.message}\n`);
    process.exit(2);
  }
}
