/**
 * kube-apiserver's `--encryption-provider-config` file: an `apiserver.config.k8s.io/v1`
 * `EncryptionConfiguration` (YAML or JSON), checked as upstream's validation checks it, with
 * every problem reported at once and the field path of each (key secrets are never echoed).
 */
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { parseDuration } from '../../config/duration.js';

export interface EncryptionKey {
  name: string;
  secret: Buffer;
}

export interface KmsConfig {
  name: string;
  endpoint: string;
  /** The plugin's own call timeout (default 3 s, as upstream). */
  timeoutMs: number;
}

export type ProviderConfig =
  | { type: 'aescbc' | 'aesgcm' | 'secretbox'; keys: EncryptionKey[] }
  | { type: 'identity' }
  | { type: 'kms'; kms: KmsConfig };

/** A group/resource as written in the file: `secrets` is {"" , secrets}, `*.` every core resource, `*.*` everything. */
export interface GroupResource {
  group: string;
  resource: string;
}

export interface ResourceRule {
  resources: GroupResource[];
  providers: ProviderConfig[];
}

export interface EncryptionConfig {
  rules: ResourceRule[];
}

export class EncryptionConfigError extends Error {
  override readonly name = 'EncryptionConfigError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid encryption provider configuration ${file}: ${problems.join('; ')}`);
  }
}

const API_VERSION = 'apiserver.config.k8s.io/v1';
const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];
const DEFAULT_KMS_TIMEOUT_MS = 3000;
const PROVIDER_TYPES = ['aescbc', 'aesgcm', 'secretbox', 'identity', 'kms'] as const;
/** Resources upstream keeps outside the REST API, which cannot be encrypted. */
const NON_REST = new Set(['apiserveripinfo', 'serviceipallocations', 'servicenodeportallocations']);

/** schema.ParseGroupResource: the part before the first dot is the resource, the rest the group. */
export function parseGroupResource(text: string): GroupResource {
  const dot = text.indexOf('.');
  return dot < 0 ? { group: '', resource: text } : { group: text.slice(dot + 1), resource: text.slice(0, dot) };
}

export function groupResourceString(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

/** Reads and validates the file; throws EncryptionConfigError listing every problem. */
export function loadEncryptionConfig(file: string): EncryptionConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new EncryptionConfigError(file, [`cannot read: ${(err as Error).message}`]);
  }
  return parseEncryptionConfig(text, file);
}

export function parseEncryptionConfig(text: string, file = 'encryption configuration'): EncryptionConfig {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new EncryptionConfigError(file, [`not YAML or JSON: ${(err as Error).message}`]);
  }
  const problems: string[] = [];
  const config = validate(doc, problems);
  if (problems.length > 0) throw new EncryptionConfigError(file, problems);
  return config;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validate(doc: unknown, problems: string[]): EncryptionConfig {
  if (!isObject(doc)) {
    problems.push('expected an EncryptionConfiguration object');
    return { rules: [] };
  }
  if (doc.kind !== 'EncryptionConfiguration' || doc.apiVersion !== API_VERSION) {
    problems.push(`expected kind EncryptionConfiguration and apiVersion ${API_VERSION}, got kind ${JSON.stringify(doc.kind)} apiVersion ${JSON.stringify(doc.apiVersion)}`);
  }
  const resources = doc.resources;
  if (!Array.isArray(resources) || resources.length === 0) {
    problems.push('resources: Required value: at least one resources is required');
    return { rules: [] };
  }
  const kmsNames = new Set<string>();
  return { rules: resources.map((entry, i) => validateRule(entry, `resources[${i}]`, kmsNames, problems)) };
}

function validateRule(entry: unknown, path: string, kmsNames: Set<string>, problems: string[]): ResourceRule {
  const rule: ResourceRule = { resources: [], providers: [] };
  if (!isObject(entry)) {
    problems.push(`${path}: expected an object with resources and providers`);
    return rule;
  }
  const names = Array.isArray(entry.resources) ? entry.resources : [];
  if (names.length === 0) problems.push(`${path}.resources: Required value: at least one ${path}.resources is required`);
  names.forEach((name, j) => {
    const p = `${path}.resources[${j}]`;
    if (typeof name !== 'string') return problems.push(`${p}: expected a string`);
    const problem = resourceNameProblem(name);
    if (problem) return problems.push(`${p}: Invalid value: ${JSON.stringify(name)}: ${problem}`);
    rule.resources.push(parseGroupResource(name));
  });
  overlapProblems(rule.resources, `${path}.resources`, problems);
  const providers = Array.isArray(entry.providers) ? entry.providers : [];
  if (providers.length === 0) problems.push(`${path}.providers: Required value: at least one ${path}.providers is required`);
  providers.forEach((provider, j) => {
    const parsed = validateProvider(provider, `${path}.providers[${j}]`, kmsNames, problems);
    if (parsed) rule.providers.push(parsed);
  });
  return rule;
}

function resourceNameProblem(name: string): string | undefined {
  if (name.toLowerCase() !== name) return 'resource name should not contain capital letters';
  if (name === '*') return "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources";
  if (NON_REST.has(name)) return 'resources which do not have REST API/s cannot be encrypted';
  const gr = parseGroupResource(name);
  if (gr.group === 'events.k8s.io') return "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file";
  if (gr.group === 'extensions') return "'extensions' group has been removed and cannot be used for encryption";
  if (gr.group === '*' && gr.resource !== '*') return 'encrypting the same resource across groups is not supported';
  return undefined;
}

function overlapProblems(resources: GroupResource[], path: string, problems: string[]): void {
  let duplicate = false;
  let overlap = false;
  resources.forEach((a, i) =>
    resources.forEach((b, j) => {
      if (i === j) return;
      if (a.group === b.group && a.resource === b.resource) duplicate = true;
      else if ((a.group === '*' && a.resource === '*') || (a.group === b.group && (a.resource === '*' || b.resource === '*'))) overlap = true;
    }),
  );
  if (duplicate) problems.push(`${path}: Invalid value: the same resource cannot be specified multiple times`);
  if (overlap) problems.push(`${path}: Invalid value: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`);
}

function validateProvider(provider: unknown, path: string, kmsNames: Set<string>, problems: string[]): ProviderConfig | undefined {
  const given = isObject(provider) ? PROVIDER_TYPES.filter((t) => provider[t] !== undefined && provider[t] !== null) : [];
  if (given.length === 0) {
    problems.push(`${path}: Invalid value: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity`);
    return undefined;
  }
  if (given.length > 1) {
    problems.push(`${path}: Invalid value: more than one provider specified in a single element, should split into different list elements`);
    return undefined;
  }
  const type = given[0]!;
  const body = (provider as Obj)[type];
  if (type === 'identity') return { type };
  if (type === 'kms') return validateKms(body, `${path}.kms`, kmsNames, problems);
  const keys = validateKeys(body, `${path}.${type}.keys`, type === 'secretbox' ? SECRETBOX_KEY_SIZES : AES_KEY_SIZES, problems);
  return { type, keys };
}

function validateKeys(body: unknown, path: string, sizes: number[], problems: string[]): EncryptionKey[] {
  const keys = isObject(body) && Array.isArray(body.keys) ? body.keys : [];
  if (keys.length === 0) problems.push(`${path}: Required value: at least one keys is required`);
  const out: EncryptionKey[] = [];
  keys.forEach((key, i) => {
    const p = `${path}[${i}]`;
    const name = isObject(key) && typeof key.name === 'string' ? key.name : '';
    const secret = isObject(key) && typeof key.secret === 'string' ? key.secret : '';
    if (name === '') problems.push(`${p}.name: Required value: name is a mandatory field for a key`);
    if (secret === '') return problems.push(`${p}.secret: Required value: secret is a mandatory field for a key`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(secret) || secret.length % 4 !== 0) return problems.push(`${p}.secret: Invalid value: "REDACTED": secrets must be base64 encoded`);
    const bytes = Buffer.from(secret, 'base64');
    if (!sizes.includes(bytes.length)) {
      return problems.push(`${p}.secret: Invalid value: "REDACTED": secret is not of the expected length, got ${bytes.length}, expected one of [${sizes.join(' ')}]`);
    }
    out.push({ name, secret: bytes });
  });
  return out;
}

function validateKms(body: unknown, path: string, kmsNames: Set<string>, problems: string[]): ProviderConfig | undefined {
  if (!isObject(body)) {
    problems.push(`${path}: expected an object`);
    return undefined;
  }
  const name = typeof body.name === 'string' ? body.name : '';
  const apiVersion = body.apiVersion ?? 'v1';
  if (name === '') problems.push(`${path}.name: Required value: name is a mandatory field for a provider`);
  if (name.includes(':')) problems.push(`${path}.name: Invalid value: ${JSON.stringify(name)}: invalid KMS provider name ${name}, must not contain ':'`);
  if (kmsNames.has(name)) problems.push(`${path}.name: Invalid value: ${JSON.stringify(name)}: duplicate KMS provider name ${name}, names must be unique`);
  kmsNames.add(name);
  // KMS v1 is off in kube-apiserver since 1.29 (the KMSv1 gate) and not offered here.
  if (apiVersion !== 'v2') problems.push(`${path}.apiVersion: Invalid value: ${JSON.stringify(apiVersion)}: only KMS apiVersion v2 is supported (KMS v1 is deprecated and disabled upstream)`);
  if (body.cachesize !== undefined) problems.push(`${path}.cachesize: Invalid value: ${JSON.stringify(body.cachesize)}: cachesize is not supported in v2`);
  return { type: 'kms', kms: { name, endpoint: validateEndpoint(body.endpoint, `${path}.endpoint`, problems), timeoutMs: validateTimeout(body.timeout, `${path}.timeout`, problems) } };
}

function validateEndpoint(value: unknown, path: string, problems: string[]): string {
  const endpoint = typeof value === 'string' ? value : '';
  if (endpoint === '') problems.push(`${path}: Invalid value: "": endpoint is a mandatory field for a kms`);
  else if (!endpoint.startsWith('unix://')) problems.push(`${path}: Invalid value: ${JSON.stringify(endpoint)}: unsupported scheme ${JSON.stringify(endpoint.split(':')[0])} for KMS provider, only unix is supported`);
  return endpoint;
}

function validateTimeout(value: unknown, path: string, problems: string[]): number {
  const timeoutMs = value === undefined ? DEFAULT_KMS_TIMEOUT_MS : typeof value === 'string' ? parseDuration(value) : undefined;
  if (timeoutMs === undefined || timeoutMs <= 0) problems.push(`${path}: Invalid value: ${JSON.stringify(value)}: timeout should be a positive value`);
  return timeoutMs ?? DEFAULT_KMS_TIMEOUT_MS;
}
