/**
 * Builds the controller configuration with the precedence flag > environment > YAML file > default,
 * and reports every problem at once (ConfigError.problems) instead of stopping at the first.
 */
import { accessSync, constants } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { formatDuration, parseDuration } from './duration.js';
import { checkKubeletServingOptions } from './kubelet-serving.js';
import { checkTlsOptions } from './tls.js';
import { isKubernetesSignerName } from '../api/pod-certificates.js';
import { isSignerName } from './signer-name.js';
import { checkWorkloadSignerOptions } from './workload-signer.js';
import { APISERVER_CONFIG_SCHEMA, UP_CONFIG_SCHEMA, checkEtcdOptions, type ApiserverConfig, type UpConfig } from './server-schema.js';
import { checkAuditOptions } from './audit-schema.js';
import { parseServiceIpRange } from '../lib/service-range.js';
import {
  CONTROLLER_CONFIG_SCHEMA,
  envName,
  flagName,
  type ConfigOf,
  type ConfigSchema,
  type ControllerConfig,
  type FieldSpec,
} from './schema.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

export interface ConfigSources {
  /** Parsed flags keyed by config key (camelCase); undefined means not given. */
  flags?: Partial<Record<string, unknown>>;
  env?: Record<string, string | undefined>;
  /** Path of an optional YAML file with camelCase keys. */
  file?: string;
}

/** A value and where it came from, in the words the user gave it (`flag --port`, `env KUBE_IDENTITY_PORT`). */
type Raw = { value: unknown; source: string };

type Converter = (text: unknown, spec: FieldSpec) => { value: unknown } | { problem: string };

function toNumber(text: unknown, spec: FieldSpec): { value: unknown } | { problem: string } {
  const n = typeof text === 'number' ? text : typeof text === 'string' && text !== '' ? Number(text) : NaN;
  const int = spec.type === 'int';
  if (!Number.isFinite(n) || (int && !Number.isInteger(n))) return { problem: `must be ${int ? 'an integer' : 'a number'}, got ${JSON.stringify(text)}` };
  if (spec.min !== undefined && n < spec.min) return { problem: `must be at least ${spec.min}, got ${n}` };
  if (spec.max !== undefined && n > spec.max) return { problem: `must be at most ${spec.max}, got ${n}` };
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
  duration: (text, spec) => {
    const ms = typeof text === 'string' ? parseDuration(text) : undefined;
    if (ms === undefined) return { problem: `must be a duration such as 15s or 1h30m, got ${JSON.stringify(text)}` };
    if (spec.min !== undefined && ms < spec.min) return { problem: `must be at least ${formatDuration(spec.min)}, got ${JSON.stringify(text)}` };
    return { value: ms };
  },
  enum: (text, spec) =>
    typeof text === 'string' && spec.values?.includes(text)
      ? { value: text }
      : { problem: `must be one of ${spec.values?.join(', ')}, got ${JSON.stringify(text)}` },
  string: (text) => (typeof text === 'string' ? { value: text } : { problem: 'must be a string' }),
};

function convert(spec: FieldSpec, { value, source }: Raw, problems: string[]): unknown {
  const out = CONVERTERS[spec.type](typeof value === 'string' ? value.trim() : value, spec);
  if ('problem' in out) {
    problems.push(`${source}: ${out.problem}`);
    return undefined;
  }
  return out.value;
}

async function readFileValues(path: string, schema: ConfigSchema, problems: string[]): Promise<Record<string, unknown>> {
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
  for (const k of Object.keys(doc)) if (!(k in schema)) problems.push(`config file ${path}: unknown field "${k}"`);
  return doc as Record<string, unknown>;
}

/** A signer the controller signs for, and its own CA pair when it has one (else the shared pair). */
export interface CustomSignerEntry {
  signerName: string;
  certFile?: string;
  keyFile?: string;
}

/**
 * Parses `customSigners`: entries separated by ";", each `signerName` or `signerName=CERT:KEY`.
 * Kubernetes signer names are refused: those have their own options and built-in policies.
 */
export function parseCustomSigners(text: string, problems: string[] = []): CustomSignerEntry[] {
  const out: CustomSignerEntry[] = [];
  for (const part of text.split(';').map((p) => p.trim()).filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    const signerName = (eq < 0 ? part : part.slice(0, eq)).trim();
    const where = `customSigners entry ${JSON.stringify(part)}`;
    if (!isSignerName(signerName)) problems.push(`${where}: signer name must be <fully qualified domain>/<path>`);
    else if (isKubernetesSignerName(signerName)) problems.push(`${where}: kubernetes.io signers are configured with their own options`);
    else if (out.some((e) => e.signerName === signerName)) problems.push(`${where}: signer listed twice`);
    if (eq < 0) {
      out.push({ signerName });
      continue;
    }
    const [certFile = '', keyFile = '', ...rest] = part.slice(eq + 1).split(':').map((f) => f.trim());
    if (certFile === '' || keyFile === '' || rest.length > 0) problems.push(`${where}: files must be given as CERT_FILE:KEY_FILE`);
    out.push({ signerName, certFile, keyFile });
  }
  return out;
}

const PER_SIGNER_PAIRS = [
  ['clusterSigningKubeletServingCertFile', 'clusterSigningKubeletServingKeyFile'],
  ['clusterSigningKubeletClientCertFile', 'clusterSigningKubeletClientKeyFile'],
  ['clusterSigningKubeApiserverClientCertFile', 'clusterSigningKubeApiserverClientKeyFile'],
  ['clusterSigningLegacyUnknownCertFile', 'clusterSigningLegacyUnknownKeyFile'],
] as const;

/** kube-controller-manager's rules for CA files, plus the custom signers'. */
function checkSigning(c: Record<string, unknown>, problems: string[]): void {
  const set = (k: string): boolean => typeof c[k] === 'string' && c[k] !== '';
  const shared = set('clusterSigningCertFile');
  if (shared !== set('clusterSigningKeyFile')) problems.push('clusterSigningCertFile and clusterSigningKeyFile must be set together');
  let perSigner = false;
  for (const [cert, key] of PER_SIGNER_PAIRS) {
    if (set(cert) !== set(key)) problems.push(`${cert} and ${key} must be set together`);
    perSigner ||= set(cert) || set(key);
  }
  if (shared && perSigner) problems.push('cannot specify default and per controller certs at the same time');
  for (const e of parseCustomSigners(typeof c.customSigners === 'string' ? c.customSigners : '', problems)) {
    if (e.certFile === undefined && !shared) problems.push(`customSigners entry "${e.signerName}" has no CA files and clusterSigningCertFile is not set`);
  }
  if (c.cleanerInterval === 0) problems.push('cleanerInterval must be greater than 0');
  if (c.caReloadInterval === 0) problems.push('caReloadInterval must be greater than 0');
}

/** host:port as a bind address (host may be empty or a bracketed IPv6 address; port 0 picks one). */
function checkBindAddress(c: Record<string, unknown>, problems: string[]): void {
  const addr = c.metricsBindAddress;
  if (typeof addr !== 'string') return;
  const m = /^(\[[^\]]*\]|[^:[\]]*):(\d{1,5})$/.exec(addr);
  if (!m || Number(m[2]) > 65535) problems.push(`metricsBindAddress: must be HOST:PORT such as 127.0.0.1:8080 or :8080, got ${JSON.stringify(addr)}`);
}

function crossCheck(c: Record<string, unknown>, problems: string[]): void {
  checkBindAddress(c, problems);
  const lease = c.leaderElectionLeaseDuration as number;
  const renew = c.leaderElectionRenewDeadline as number;
  const retry = c.leaderElectionRetryPeriod as number;
  if (c.leaderElect !== false && lease !== undefined && renew !== undefined && retry !== undefined) {
    if (lease <= renew) problems.push('leaderElectionLeaseDuration must be greater than leaderElectionRenewDeadline');
    if (renew <= 1.2 * retry) problems.push('leaderElectionRenewDeadline must be greater than 1.2 × leaderElectionRetryPeriod');
  }
  checkSigning(c, problems);
  checkKubeletServingOptions(c, problems);
  const customSigners = parseCustomSigners(typeof c.customSigners === 'string' ? c.customSigners : '');
  checkWorkloadSignerOptions(c, problems, new Set(customSigners.map((e) => e.signerName)));
  checkTlsOptions(c, problems);
  if ((c.rateLimiterBaseDelay as number) > (c.rateLimiterMaxDelay as number)) problems.push('rateLimiterBaseDelay must not exceed rateLimiterMaxDelay');
}

/**
 * Reads every option of `schema` (flag > env > file > default), converts and checks each, then runs
 * `crossCheck` on the whole; throws one ConfigError listing every problem.
 */
export async function loadConfig<S extends ConfigSchema>(
  schema: S,
  sources: ConfigSources = {},
  crossCheck: (c: Record<string, unknown>, problems: string[]) => void = () => {},
): Promise<ConfigOf<S>> {
  const problems: string[] = [];
  const fileValues = sources.file ? await readFileValues(sources.file, schema, problems) : {};
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema)) {
    const flag = sources.flags?.[key];
    const env = sources.env?.[envName(key)];
    let raw: Raw = { value: spec.default, source: `default ${key}` };
    if (flag !== undefined) raw = { value: flag, source: `flag --${flagName(key)}` };
    else if (env !== undefined) raw = { value: env, source: `env ${envName(key)}` };
    else if (fileValues[key] !== undefined) raw = { value: fileValues[key], source: `config file ${sources.file ?? ''}: ${key}` };
    out[key] = convert(spec, raw, problems);
  }
  crossCheck(out, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as ConfigOf<S>;
}

export function loadControllerConfig(sources: ConfigSources = {}): Promise<ControllerConfig> {
  return loadConfig(CONTROLLER_CONFIG_SCHEMA, sources, crossCheck);
}

/** The serving pair is given whole or not at all, and its cipher suites are Go's names. */
function checkServingFiles(c: Record<string, unknown>, problems: string[]): void {
  if (Boolean(c.tlsCertFile) !== Boolean(c.tlsPrivateKeyFile)) problems.push('tlsCertFile and tlsPrivateKeyFile must be given together');
  checkTlsOptions(c, problems);
}

/** The token file is read at start: say now, with the other problems, when it cannot be. */
function checkTokenFile(c: Record<string, unknown>, problems: string[]): void {
  const file = c.tokenAuthFile;
  if (typeof file !== 'string' || file === '') return;
  try {
    accessSync(file, constants.R_OK);
  } catch (err) {
    problems.push(`tokenAuthFile: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** The server allocates from an IPv4 range of a /12 to a /29. */
function checkServiceRange(c: Record<string, unknown>, problems: string[]): void {
  if (typeof c.serviceClusterIpRange !== 'string') return;
  try {
    parseServiceIpRange(c.serviceClusterIpRange);
  } catch (err) {
    problems.push((err as Error).message);
  }
}

export function loadApiserverConfig(sources: ConfigSources = {}): Promise<ApiserverConfig> {
  return loadConfig(APISERVER_CONFIG_SCHEMA, sources, (c, problems) => {
    checkEtcdOptions(c, problems);
    checkTokenFile(c, problems);
    checkAuditOptions(c, problems);
    checkServingFiles(c, problems);
    checkServiceRange(c, problems);
  });
}

export function loadUpConfig(sources: ConfigSources = {}): Promise<UpConfig> {
  return loadConfig(UP_CONFIG_SCHEMA, sources, (c, problems) => {
    checkBindAddress(c, problems);
    checkEtcdOptions(c, problems);
    checkTokenFile(c, problems);
    checkAuditOptions(c, problems);
    checkServingFiles(c, problems);
    checkServiceRange(c, problems);
  });
}
