/** coordination.k8s.io Leases: leader election does GET then CREATE or UPDATE with a resourceVersion. */
import { findResource } from '../../../api/resources.js';
import { type FieldError, invalid } from '../../http/field-errors.js';
import type { KObject } from '../../../api/meta.js';
import type { Strategy } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';

const info = findResource('coordination.k8s.io', 'v1', 'leases');
if (!info) throw new Error('leases missing from RESOURCES');

function validateLease(obj: KObject): FieldError[] {
  const spec = (obj.spec ?? {}) as { leaseDurationSeconds?: unknown; leaseTransitions?: unknown };
  const errs: FieldError[] = [];
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds !== null && !(Number(spec.leaseDurationSeconds) > 0)) {
    errs.push(invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions !== null && !(Number(spec.leaseTransitions) >= 0)) {
    errs.push(invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  }
  return errs;
}

export const leaseStrategy: Strategy = {
  info,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  validate: validateLease,
  validateUpdate: validateLease,
  table: {
    columns: [NAME_COLUMN, column('Holder', 'string', 'The holder of the lease'), AGE_COLUMN],
    cells: (obj, now) => [
      obj.metadata?.name ?? '',
      String(((obj.spec ?? {}) as { holderIdentity?: string }).holderIdentity ?? ''),
      ageCell(obj.metadata?.creationTimestamp, now),
    ],
  },
};
