/**
 * apimachinery's name and label syntax checks (util/validation and api/validation/generic), each
 * returning upstream's exact messages: kubectl users and client tests match on these texts.
 */
import { randomInt } from 'node:crypto';

/** A name validator as registries use it: `prefix` is true when checking a generateName. */
export type NameValidator = (name: string, prefix: boolean) => string[];

const LABEL_MAX = 63;
const SUBDOMAIN_MAX = 253;
const QUALIFIED_NAME_MAX = 63;
const LABEL_VALUE_MAX = 63;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;

const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** RegexError: the message, the examples (note upstream's double space) and the regex. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const eg = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${msg} (e.g. ${eg}regex used for validation is '${fmt}')`;
}

/** Go's len(): limits count UTF-8 bytes, not UTF-16 units. */
export const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');
export const maxLenError = (n: number): string => `must be no more than ${n} characters`;
export const EMPTY_ERROR = 'must be non-empty';

export function isDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_MAX) errs.push(maxLenError(LABEL_MAX));
  if (!DNS1123_LABEL_RE.test(value)) {
    errs.push(
      DNS1123_SUBDOMAIN_RE.test(value)
        ? 'must not contain dots'
        : regexError(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            DNS1123_LABEL_FMT,
            'my-name',
            '123-abc',
          ),
    );
  }
  return errs;
}

export function isDns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > SUBDOMAIN_MAX) errs.push(maxLenError(SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

/** IsQualifiedName: `[dns-subdomain-prefix/]name`, used for label keys, annotation keys, finalizers. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else errs.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_KEY_RE = new RegExp(`^${CONFIG_KEY_FMT}$`);

/** IsConfigMapKey: a key of ConfigMap/Secret data, which may become a file name, so no '.' or '..' prefix. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (value.length > SUBDOMAIN_MAX) errs.push(maxLenError(SUBDOMAIN_MAX));
  if (!CONFIG_KEY_RE.test(value)) {
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/**
 * A generateName may end in '-'; upstream masks that by replacing the last two characters with
 * 'a' (sic: `name[:len-2] + "a"`) before checking.
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/** NameIsDNSSubdomain: ServiceAccount, Secret, Pod, ControllerRevision, Lease... */
export const validateSubdomainName: NameValidator = (name, prefix) =>
  isDns1123Subdomain(prefix ? maskTrailingDash(name) : name);

/** NameIsDNSLabel: Namespace names (and metadata.namespace). */
export const validateLabelName: NameValidator = (name, prefix) =>
  isDns1123Label(prefix ? maskTrailingDash(name) : name);

/** ValidatePathSegmentName: the only rule for kinds whose names are free-form (CSR, RBAC). */
export const validatePathSegmentName: NameValidator = (name, prefix) => {
  if (!prefix) {
    for (const bad of ['.', '..']) if (name === bad) return [`may not be '${bad}'`];
  }
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
};

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATED_BASE = 58;
const RANDOM_LENGTH = 5;

/** names.SimpleNameGenerator: the base cut to 58 characters plus 5 random ones. */
export function generateName(base: string): string {
  let out = base.length > MAX_GENERATED_BASE ? base.slice(0, MAX_GENERATED_BASE) : base;
  for (let i = 0; i < RANDOM_LENGTH; i++) out += GENERATE_ALPHABET[randomInt(GENERATE_ALPHABET.length)];
  return out;
}

/** The finalizers core/v1 knows without a domain (IsStandardFinalizerName). */
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/**
 * core's validateFinalizerName: a qualified name, and one without a `/` must be a standard
 * finalizer. The messages are field error details.
 */
export function finalizerNameErrors(name: string): string[] {
  const errs = isQualifiedName(name);
  if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) errs.push('name is neither a standard finalizer name nor is it fully qualified');
  return errs;
}
