/**
 * apps/v1 ControllerRevisions: `data` (any JSON, stored raw) is required and immutable after
 * create; `revision` must be ≥ 0 and may change.
 */
import type { KObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import { type FieldError, invalid, required } from '../../http/field-errors.js';
import { deepEqual } from '../../../lib/json-value.js';
import type { Strategy } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';

const info = findResource('apps', 'v1', 'controllerrevisions');
if (!info) throw new Error('controllerrevisions missing from RESOURCES');

function validateRevision(obj: KObject): FieldError[] {
  const errs: FieldError[] = [];
  if (obj.data === undefined || obj.data === null) errs.push(required('data', 'data is mandatory'));
  if (obj.revision === undefined || obj.revision === null) errs.push(required('revision'));
  else if (typeof obj.revision !== 'number' || !Number.isInteger(obj.revision)) {
    errs.push(invalid('revision', obj.revision, 'must be an integer'));
  } else if (obj.revision < 0) errs.push(invalid('revision', obj.revision, 'must be greater than or equal to 0'));
  return errs;
}

/** `<lowercase kind>.<group>/<name>` of the controlling owner, or `<none>`. */
function controllerCell(obj: KObject): string {
  const owner = obj.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (!owner) return '<none>';
  const group = owner.apiVersion.includes('/') ? owner.apiVersion.split('/')[0] : '';
  return `${owner.kind.toLowerCase()}${group ? `.${group}` : ''}/${owner.name}`;
}

export const controllerRevisionStrategy: Strategy = {
  info,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  validate: validateRevision,
  validateUpdate(obj, old) {
    const errs = validateRevision(obj);
    if (!deepEqual(obj.data, old.data)) errs.push(invalid('data', obj.data, 'field is immutable'));
    return errs;
  },
  table: {
    columns: [
      NAME_COLUMN,
      column('Controller', 'string', 'Controller of the object'),
      column('Revision', 'integer', 'Revision indicates the revision of the state represented by Data.'),
      AGE_COLUMN,
    ],
    cells: (obj, now) => [obj.metadata?.name ?? '', controllerCell(obj), obj.revision ?? 0, ageCell(obj.metadata?.creationTimestamp, now)],
  },
};
