/**
 * Secrets: `stringData` folded into `data`, base64 values, `type` defaulted and immutable, and the
 * keys each built-in type requires (upstream's ValidateSecret).
 */
import type { KObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import { type FieldError, invalid, required } from '../../http/field-errors.js';
import { checkBase64, validateImmutable, validateKeys } from './data-fields.js';
import { goJsonSyntaxError } from '../../validation/json-syntax.js';
import type { Strategy } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';

const info = findResource('', 'v1', 'secrets');
if (!info) throw new Error('secrets missing from RESOURCES');

const SA_TOKEN = 'kubernetes.io/service-account-token';
const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';

/** Folds write-only `stringData` into `data` and defaults `type`; 400 on bad base64. */
function normalize(obj: KObject): void {
  checkBase64(obj, 'data');
  const stringData = obj.stringData as Record<string, string> | undefined;
  if (stringData && typeof stringData === 'object') {
    const data = { ...((obj.data ?? {}) as Record<string, string>) };
    for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
  if (!obj.type) obj.type = 'Opaque';
}

/** Why Go's json.Unmarshal into a map refuses `text`, or undefined when it takes it. */
function dockerConfigError(text: string): string | undefined {
  const syntax = goJsonSyntaxError(text);
  if (syntax !== undefined) return syntax;
  const value: unknown = JSON.parse(text);
  if (value === null || (typeof value === 'object' && !Array.isArray(value))) return undefined;
  const kind = Array.isArray(value) ? 'array' : typeof value === 'boolean' ? 'bool' : typeof value;
  return `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`;
}

/** A docker config key: present, and a JSON object. */
function validateDockerConfig(data: Record<string, string>, key: string): FieldError[] {
  const value = data[key];
  if (value === undefined) return [required(`data[${key}]`)];
  const why = dockerConfigError(Buffer.from(value, 'base64').toString('utf8'));
  return why === undefined ? [] : [invalid(`data[${key}]`, '<secret contents redacted>', why)];
}

/** The keys upstream requires of each built-in type (present, even if empty, unless said otherwise). */
function validateType(obj: KObject, data: Record<string, string>): FieldError[] {
  const has = (key: string): boolean => key in data;
  switch (obj.type) {
    case SA_TOKEN:
      // The token and the account's uid may be added later, by a controller.
      return obj.metadata?.annotations?.[SA_NAME_ANNOTATION] ? [] : [required(`metadata.annotations[${SA_NAME_ANNOTATION}]`)];
    case 'kubernetes.io/dockercfg':
      return validateDockerConfig(data, '.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return validateDockerConfig(data, '.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      return has('username') || has('password') ? [] : [required('data[username]'), required('data[password]')];
    case 'kubernetes.io/ssh-auth':
      // Present and not empty.
      return data['ssh-privatekey'] ? [] : [required('data[ssh-privatekey]')];
    case 'kubernetes.io/tls':
      return ['tls.crt', 'tls.key'].filter((key) => !has(key)).map((key) => required(`data[${key}]`));
    default:
      return [];
  }
}

function validateSecret(obj: KObject): FieldError[] {
  const data = (obj.data ?? {}) as Record<string, string>;
  const errs = [...validateKeys(obj.data, 'data'), ...validateType(obj, data)];
  const size = Object.values(data).reduce((n, v) => n + Buffer.from(v, 'base64').length, 0);
  if (size > 1024 * 1024) errs.push({ type: 'FieldValueTooLong', field: 'data', detail: 'must have at most 1048576 bytes' });
  return errs;
}

export const secretStrategy: Strategy = {
  info,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate: normalize,
  prepareForUpdate: normalize,
  validate: validateSecret,
  validateUpdate(obj, old) {
    const errs = validateSecret(obj);
    if (obj.type !== old.type) errs.push(invalid('type', obj.type, 'field is immutable'));
    return [...errs, ...validateImmutable(obj, old, ['data'])];
  },
  table: {
    columns: [
      NAME_COLUMN,
      column('Type', 'string', 'The type of the secret'),
      column('Data', 'integer', 'The number of entries in the secret data'),
      AGE_COLUMN,
    ],
    cells: (obj, now) => [
      obj.metadata?.name ?? '',
      obj.type ?? '',
      Object.keys((obj.data ?? {}) as object).length,
      ageCell(obj.metadata?.creationTimestamp, now),
    ],
  },
};
