/**
 * Builds the controller configuration with the precedence flag > environment > YAML file > default,
 * and reports every problem at once (ConfigError.problems) instead of stopping at the first.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from './duration.js';
import { CONTROLLER_CONFIG_SCHEMA, envName, flagName, type ConfigKey, type ControllerConfig, type FieldSpec } from './schema.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

export interface ConfigSources {
  /** Parsed flags keyed by config key (camelCase); undefined means not given. */
  flags?: Partial<Record<ConfigKey, unknown>>;
  env?: Record<string, string | undefined>;
  /** Path of an optional YAML file with camelCase keys. */
  file?: string;
}

type Raw = { value: unknown; source: string };

type Converter = (text: unknown, spec: FieldSpec) => { value: unknown } | { problem: string };

function toNumber(text: unknown, spec: FieldSpec): { value: unknown } | { problem: string } {
  const n = typeof text === 'number' ? text : typeof text === 'string' && text !== '' ? Number(text) : NaN;
  const int = spec.type === 'int';
  if (!Number.isFinite(n) || (int && !Number.isInteger(n))) return { problem: `must be ${int ? 'an integer' : 'a number'}, got ${JSON.stringify(text)}` };
  if (spec.min !== undefined && n < spec.min) return { problem: `must be at least ${spec.min}, got ${n}` };
  return { value: n };
}

const CONVERTERS: Record<FieldSpec['type'], Converter> = {
  bool: (text) => {
    if (typeof text === 'boolean') return { value: text };
    if (text === 'true' || text === '1') return { value: true };
    if (text === 'false' || text === '0') return { value: false };
    return { problem: `must be true or false, got ${JSON.stringify(text)}` };
  },
  int: toNumber,
  number: toNumber,
  duration: (text) => {
    const ms = typeof text === 'string' ? parseDuration(text) : undefined;
    return ms === undefined ? { problem: `must be a duration such as 15s or 1h30m, got ${JSON.stringify(text)}` } : { value: ms };
  },
  enum: (text, spec) =>
    typeof text === 'string' && spec.values?.includes(text)
      ? { value: text }
      : { problem: `must be one of ${spec.values?.join(', ')}, got ${JSON.stringify(text)}` },
  string: (text) => (typeof text === 'string' ? { value: text } : { problem: 'must be a string' }),
};

function convert(key: string, spec: FieldSpec, { value, source }: Raw, problems: string[]): unknown {
  const out = CONVERTERS[spec.type](typeof value === 'string' ? value.trim() : value, spec);
  if ('problem' in out) {
    problems.push(`${source} ${key}: ${out.problem}`);
    return undefined;
  }
  return out.value;
}

async function readFileValues(path: string, problems: string[]): Promise<Record<string, unknown>> {
  let doc: unknown;
  try {
    doc = parseYaml(await readFile(path, 'utf8'));
  } catch (err) {
    problems.push(`config file ${path}: ${(err as Error).message}`);
    return {};
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    problems.push(`config file ${path}: must be a mapping`);
    return {};
  }
  for (const k of Object.keys(doc)) if (!(k in CONTROLLER_CONFIG_SCHEMA)) problems.push(`config file ${path}: unknown field "${k}"`);
  return doc as Record<string, unknown>;
}

function crossCheck(c: Record<string, unknown>, problems: string[]): void {
  const lease = c.leaderElectionLeaseDuration as number;
  const renew = c.leaderElectionRenewDeadline as number;
  const retry = c.leaderElectionRetryPeriod as number;
  if (c.leaderElect !== false && lease !== undefined && renew !== undefined && retry !== undefined) {
    if (lease <= renew) problems.push('leaderElectionLeaseDuration must be greater than leaderElectionRenewDeadline');
    if (renew <= 1.2 * retry) problems.push('leaderElectionRenewDeadline must be greater than 1.2 × leaderElectionRetryPeriod');
  }
  if (((c.clusterSigningCertFile as string) === '') !== ((c.clusterSigningKeyFile as string) === '')) {
    problems.push('clusterSigningCertFile and clusterSigningKeyFile must be set together');
  }
  if ((c.rateLimiterBaseDelay as number) > (c.rateLimiterMaxDelay as number)) problems.push('rateLimiterBaseDelay must not exceed rateLimiterMaxDelay');
}

export async function loadControllerConfig(sources: ConfigSources = {}): Promise<ControllerConfig> {
  const problems: string[] = [];
  const fileValues = sources.file ? await readFileValues(sources.file, problems) : {};
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(CONTROLLER_CONFIG_SCHEMA) as [ConfigKey, FieldSpec][]) {
    const flag = sources.flags?.[key];
    const env = sources.env?.[envName(key)];
    let raw: Raw = { value: spec.default, source: 'default' };
    if (flag !== undefined) raw = { value: flag, source: `flag --${flagName(key)}` };
    else if (env !== undefined) raw = { value: env, source: `env ${envName(key)}` };
    else if (fileValues[key] !== undefined) raw = { value: fileValues[key], source: 'config file' };
    out[key] = convert(key, spec, raw, problems);
  }
  crossCheck(out, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as ControllerConfig;
}
