/**
 * Pods, minimal: enough for bound tokens (pod references) and `kubectl get`. Spec and status are
 * split between the main resource and /status, as upstream does (Nodes: node.ts); the spec is
 * immutable but for what pod-update.ts lets an update change.
 */
import { isMirrorPod, type Pod } from '../../../api/pods.js';
import { findResource } from '../../../api/resources.js';
import { forbidden, required } from '../../http/field-errors.js';
import type { Strategy, SubresourceStrategy } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';
import { isRecord, list } from '../../../lib/json.js';
import { setPodDefaults } from './pod-defaults.js';
import { podQosClass } from './pod-qos.js';
import { mirrorAnnotationUpdates, validatePodUpdate } from './pod-update.js';

const podInfo = findResource('', 'v1', 'pods');
if (!podInfo) throw new Error('pods missing from RESOURCES');


/** /status: only status changes; spec is kept. */
export const statusOnly: SubresourceStrategy = {
  prepareForUpdate(obj, old) {
    obj.spec = old.spec;
  },
  validateUpdate: () => [],
};

/**
 * Pods' /status, as upstream's podStatusStrategy: the spec and owner references are kept (a status
 * writer, a node included, must not hand its pod to the garbage collector), and no pod becomes or
 * stops being a mirror pod, which would change what its node reaches through it.
 */
const podStatusOnly: SubresourceStrategy<Pod> = {
  prepareForUpdate(obj, old) {
    obj.spec = old.spec;
    const owners = old.metadata?.ownerReferences;
    if (!obj.metadata) return;
    if (owners === undefined) delete obj.metadata.ownerReferences;
    else obj.metadata.ownerReferences = owners;
  },
  validateUpdate: (obj, old) => mirrorAnnotationUpdates(obj, old),
};

function podCells(obj: Pod, now: Date): unknown[] {
  const spec = obj.spec ?? {};
  const status = obj.status ?? {};
  // Container statuses and readiness gates are free-form in the served schema: only objects count.
  const statuses = list(status.containerStatuses).filter(isRecord);
  const ready = statuses.filter((c) => c.ready === true).length;
  const restarts = statuses.reduce((n, c) => n + (typeof c.restartCount === 'number' ? c.restartCount : 0), 0);
  const reason = obj.metadata?.deletionTimestamp ? 'Terminating' : status.reason || status.phase || '';
  const gates = list(spec.readinessGates);
  return [
    obj.metadata?.name ?? '',
    `${ready}/${(spec.containers ?? []).length}`,
    reason,
    restarts,
    ageCell(obj.metadata?.creationTimestamp, now),
    status.podIP || '<none>',
    spec.nodeName || '<none>',
    status.nominatedNodeName || '<none>',
    gates.length === 0 ? '<none>' : `0/${gates.length}`,
  ];
}

export const podStrategy: Strategy<Pod> = {
  info: podInfo,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  setDefaults: setPodDefaults,
  prepareForCreate(obj) {
    const spec = obj.spec ?? {};
    // Upstream's ServiceAccount admission leaves a mirror pod's spec as its kubelet wrote it (the
    // kubelet deletes a mirror pod that differs from its manifest), so it gets no default account.
    const sa = spec.serviceAccountName || spec.serviceAccount || (isMirrorPod(obj) ? '' : 'default');
    obj.spec = sa === '' ? spec : { ...spec, serviceAccountName: sa, serviceAccount: sa };
    obj.status = { phase: 'Pending', qosClass: podQosClass(obj) };
  },
  prepareForUpdate(obj, old) {
    obj.status = old.status;
  },
  validateUpdate: validatePodUpdate,
  validate(obj) {
    const spec = obj.spec ?? {};
    const errs = (spec.containers ?? []).length === 0 ? [required('spec.containers')] : [];
    // ValidatePodCreate: ephemeral containers only arrive through the pods/ephemeralcontainers subresource.
    if ((spec.ephemeralContainers ?? []).length > 0) errs.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
    return errs;
  },
  subresources: { status: podStatusOnly },
  table: {
    columns: [
      NAME_COLUMN,
      column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
      column('Status', 'string', 'The aggregate status of the containers in this pod.'),
      column('Restarts', 'string', 'The number of times the containers in this pod have been restarted.'),
      AGE_COLUMN,
      column('IP', 'string', 'IP address allocated to the pod.', 1),
      column('Node', 'string', 'Name of the Node the Pod is running on.', 1),
      column('Nominated Node', 'string', 'Name of the node where the Pod is nominated to run.', 1),
      column('Readiness Gates', 'string', 'Pod readiness gates.', 1),
    ],
    cells: podCells,
  },
};
