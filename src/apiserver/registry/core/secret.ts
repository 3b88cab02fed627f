/** Secrets: `stringData` folded into `data`, base64 values, `type` defaulted and immutable. */
import type { KObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import { type FieldError, invalid, required } from '../../http/field-errors.js';
import { checkBase64, validateImmutable, validateKeys } from './data-fields.js';
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

function validateSecret(obj: KObject): FieldError[] {
  const errs = validateKeys(obj.data, 'data');
  if (obj.type === SA_TOKEN && !obj.metadata?.annotations?.[SA_NAME_ANNOTATION]) {
    errs.push(required(`metadata.annotations[${SA_NAME_ANNOTATION}]`));
  }
  const size = Object.values((obj.data ?? {}) as Record<string, string>).reduce((n, v) => n + Buffer.from(v, 'base64').length, 0);
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
