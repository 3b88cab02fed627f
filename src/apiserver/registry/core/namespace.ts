/**
 * Namespaces: DNS-1123 label names, the `kubernetes` finalizer in spec.finalizers and
 * `status.phase: Active` on create, status only through /status. Deletion follows upstream: the
 * namespace turns Terminating and stays until its contents are gone and the `kubernetes`
 * finalizer is dropped (see controllers/namespace-finalizer.ts); the system namespaces cannot be deleted.
 */
import type { KObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import { errors } from '../../http/errors.js';
import { finalizerNameErrors, validateLabelName } from '../../validation/names.js';
import { invalid } from '../../http/field-errors.js';
import type { Strategy } from '../generic/strategy.js';
import { timestampSeconds } from '../../../lib/rfc3339.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** The spec finalizer the namespace controller removes once the contents are gone. */
export const FINALIZER = 'kubernetes';

const info = findResource('', 'v1', 'namespaces');
if (!info) throw new Error('namespaces missing from RESOURCES');

function specFinalizers(obj: KObject): string[] {
  const f = ((obj.spec ?? {}) as { finalizers?: unknown }).finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

function phase(obj: KObject): string {
  return ((obj.status ?? {}) as { phase?: string }).phase ?? '';
}

export const namespaceStrategy: Strategy = {
  info,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  validateName: validateLabelName,
  // SetDefaults_Namespace: the immutable name label selectors match on (not for generateName, as upstream).
  setDefaults(obj) {
    const meta = obj.metadata;
    if (meta?.name) meta.labels = { ...meta.labels, 'kubernetes.io/metadata.name': meta.name };
  },
  prepareForCreate(obj) {
    const spec = (obj.spec ?? {}) as { finalizers?: string[] };
    const finalizers = spec.finalizers ?? [];
    obj.spec = { ...spec, finalizers: finalizers.includes(FINALIZER) ? finalizers : [...finalizers, FINALIZER] };
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(obj, old) {
    obj.spec = { ...((obj.spec ?? {}) as object), finalizers: ((old.spec ?? {}) as { finalizers?: string[] }).finalizers };
    obj.status = old.status;
  },
  deleteDuringUpdate: (obj) => specFinalizers(obj).length === 0,
  subresources: {
    // PUT /finalize (the namespace controller's last step): spec.finalizers and metadata change,
    // status does not. Emptying spec.finalizers of a Terminating namespace deletes it.
    finalize: {
      prepareForUpdate(obj, old) {
        obj.status = old.status;
      },
      validateUpdate: (obj) =>
        specFinalizers(obj).flatMap((f, i) => finalizerNameErrors(f).map((m) => invalid(`spec.finalizers[${i}]`, f, m))),
    },
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

/**
 * Upstream's namespace Delete: the first delete stamps deletionTimestamp and phase Terminating
 * and keeps the namespace; later ones change nothing while spec.finalizers remain. Undefined once
 * they are gone, so the generic deletion (metadata.finalizers included) takes over.
 */
export function terminateNamespace(ns: KObject, now: Date): KObject | undefined {
  if (ns.metadata?.deletionTimestamp && specFinalizers(ns).length === 0) return undefined;
  if (!ns.metadata?.deletionTimestamp) {
    ns.metadata = { ...ns.metadata, deletionTimestamp: timestampSeconds(now) };
  }
  ns.status = { ...((ns.status ?? {}) as object), phase: 'Terminating' };
  return ns;
}

/** The namespace with the `kubernetes` finalizer dropped (what the controller's /finalize call does). */
export function withoutKubernetesFinalizer(ns: KObject): KObject {
  return { ...ns, spec: { ...((ns.spec ?? {}) as object), finalizers: specFinalizers(ns).filter((f) => f !== FINALIZER) } };
}
