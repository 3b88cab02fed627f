/**
 * Nodes, minimal: enough for bound tokens (node references), the serving approver's addresses and
 * `kubectl get`. Spec and status are split between the main resource and /status, as upstream does,
 * and both updates are validated as upstream's ValidateNodeUpdate validates them.
 */
import type { Node, NodeAddress } from '../../../api/nodes.js';
import { findResource } from '../../../api/resources.js';
import { duplicate, type FieldError } from '../../http/field-errors.js';
import type { Strategy, SubresourceStrategy } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';
import { statusOnly } from './pod.js';

const nodeInfo = findResource('', 'v1', 'nodes');
if (!nodeInfo) throw new Error('nodes missing from RESOURCES');

/**
 * A NodeAddress's fields have no omitempty upstream: an entry sent without them decodes, is stored
 * and is read back as empty strings. Kept the same here, so every stored address has both.
 */
function setNodeDefaults(obj: Node): void {
  const addresses = obj.status?.addresses;
  if (!Array.isArray(addresses)) return;
  obj.status = { ...obj.status, addresses: addresses.map((a: Partial<NodeAddress>) => ({ ...a, type: a.type ?? '', address: a.address ?? '' })) };
}

/** `%#v` of a core.NodeAddress, as field.Duplicate prints a struct. */
const goNodeAddress = (a: NodeAddress): { goSyntax: string } => ({
  goSyntax: `core.NodeAddress{Type:${JSON.stringify(a.type)}, Address:${JSON.stringify(a.address)}}`,
});

/**
 * Upstream's ValidateNodeUpdate (the main resource and /status alike): no address twice in
 * status.addresses. ValidateNode, on create, does not check them, and neither does this.
 */
function validateNodeUpdate(obj: Node): FieldError[] {
  const seen = new Set<string>();
  const errs: FieldError[] = [];
  (obj.status?.addresses ?? []).forEach((a, i) => {
    const key = JSON.stringify([a.type, a.address]);
    if (seen.has(key)) errs.push(duplicate(`status.addresses[${i}]`, goNodeAddress(a)));
    seen.add(key);
  });
  return errs;
}

const nodeStatusStrategy: SubresourceStrategy<Node> = {
  prepareForUpdate: statusOnly.prepareForUpdate,
  validateUpdate: validateNodeUpdate,
};

function nodeStatus(obj: Node): string {
  const ready = (obj.status?.conditions ?? []).find((c) => c.type === 'Ready');
  let s = !ready ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady';
  if (obj.spec?.unschedulable === true) s += ',SchedulingDisabled';
  return s;
}

export const nodeStrategy: Strategy<Node> = {
  info: nodeInfo,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  setDefaults: setNodeDefaults,
  prepareForUpdate(obj, old) {
    obj.status = old.status;
  },
  validateUpdate: validateNodeUpdate,
  subresources: { status: nodeStatusStrategy },
  table: {
    columns: [
      NAME_COLUMN,
      column('Status', 'string', 'The status of the node'),
      column('Roles', 'string', 'The roles of the node'),
      AGE_COLUMN,
      column('Version', 'string', 'Kubelet Version reported by the node.'),
    ],
    cells: (obj, now) => {
      const roles = Object.keys(obj.metadata?.labels ?? {})
        .filter((l) => l.startsWith('node-role.kubernetes.io/'))
        .map((l) => l.slice('node-role.kubernetes.io/'.length))
        .filter((r) => r !== '');
      return [
        obj.metadata?.name ?? '',
        nodeStatus(obj),
        roles.length > 0 ? roles.sort().join(',') : '<none>',
        ageCell(obj.metadata?.creationTimestamp, now),
        obj.status?.nodeInfo?.kubeletVersion ?? '',
      ];
    },
  },
};
