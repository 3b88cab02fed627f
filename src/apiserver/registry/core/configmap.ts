/** ConfigMaps: config-key names across `data` and `binaryData`, base64 binaryData, `immutable`. */
import { findResource } from '../../../api/resources.js';
import { checkBase64, validateImmutable, validateKeys } from './data-fields.js';
import type { Strategy } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';

const info = findResource('', 'v1', 'configmaps');
if (!info) throw new Error('configmaps missing from RESOURCES');

export const configMapStrategy: Strategy = {
  info,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate: (obj) => checkBase64(obj, 'binaryData'),
  prepareForUpdate: (obj) => checkBase64(obj, 'binaryData'),
  validate: (obj) => [...validateKeys(obj.data, 'data'), ...validateKeys(obj.binaryData, 'binaryData')],
  validateUpdate: (obj, old) => [
    ...validateKeys(obj.data, 'data'),
    ...validateKeys(obj.binaryData, 'binaryData'),
    ...validateImmutable(obj, old, ['data', 'binaryData']),
  ],
  table: {
    columns: [NAME_COLUMN, column('Data', 'integer', 'The number of entries in the config map'), AGE_COLUMN],
    cells: (obj, now) => [
      obj.metadata?.name ?? '',
      Object.keys((obj.data ?? {}) as object).length + Object.keys((obj.binaryData ?? {}) as object).length,
      ageCell(obj.metadata?.creationTimestamp, now),
    ],
  },
};
