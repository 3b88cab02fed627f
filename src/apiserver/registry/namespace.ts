/**
 * Namespaces: DNS-1123 label names, `spec.finalizers: [kubernetes]` and `status.phase: Active`
 * by default, status only through /status. Deletion removes the namespace and everything in it
 * at once (no namespace controller runs here); the system namespaces cannot be deleted.
 */
import type { KObject } from '../../api/meta.js';
import { findResource } from '../../api/resources.js';
import { errors } from '../errors.js';
import { NAME_COLUMN } from '../handlers/table.js';
import { validateLabelName } from '../machinery.js';
import type { Strategy } from './strategy.js';
import { AGE_COLUMN, ageCell, column } from './table-columns.js';

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public'];

const info = findResource('', 'v1', 'namespaces');
if (!info) throw new Error('namespaces missing from RESOURCES');

function phase(obj: KObject): string {
  return ((obj.status ?? {}) as { phase?: string }).phase ?? '';
}

export const namespaceStrategy: Strategy = {
  info,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  validateName: validateLabelName,
  prepareForCreate(obj) {
    const spec = (obj.spec ?? {}) as { finalizers?: string[] };
    obj.spec = { ...spec, finalizers: spec.finalizers && spec.finalizers.length > 0 ? spec.finalizers : ['kubernetes'] };
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(obj, old) {
    obj.spec = { ...((obj.spec ?? {}) as object), finalizers: ((old.spec ?? {}) as { finalizers?: string[] }).finalizers };
    obj.status = old.status;
  },
  subresources: {
    status: {
      prepareForUpdate(obj, old) {
        obj.spec = old.spec;
        obj.metadata = { ...obj.metadata, labels: old.metadata?.labels, annotations: old.metadata?.annotations };
      },
      validateUpdate: () => [],
    },
  },
  table: {
    columns: [NAME_COLUMN, column('Status', 'string', 'The status of the namespace'), AGE_COLUMN],
    cells: (obj, now) => [obj.metadata?.name ?? '', phase(obj), ageCell(obj.metadata?.creationTimestamp, now)],
  },
};

/** 403 for the namespaces the cluster cannot live without. */
export function checkNamespaceDeletable(obj: KObject): void {
  const name = obj.metadata?.name ?? '';
  if (SYSTEM_NAMESPACES.includes(name)) {
    throw errors.admissionForbidden({ group: '', resource: 'namespaces', name }, 'this namespace may not be deleted');
  }
}
