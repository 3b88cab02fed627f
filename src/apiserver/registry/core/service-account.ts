/** ServiceAccounts: only object metadata is validated; secrets and imagePullSecrets are free-form. */
import { findResource } from '../../../api/resources.js';
import type { Strategy } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';

const info = findResource('', 'v1', 'serviceaccounts');
if (!info) throw new Error('serviceaccounts missing from RESOURCES');

export const serviceAccountStrategy: Strategy = {
  info,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  table: {
    columns: [NAME_COLUMN, column('Secrets', 'integer', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.'), AGE_COLUMN],
    cells: (obj, now) => [
      obj.metadata?.name ?? '',
      Array.isArray(obj.secrets) ? obj.secrets.length : 0,
      ageCell(obj.metadata?.creationTimestamp, now),
    ],
  },
};
