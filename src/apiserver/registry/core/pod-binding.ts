/**
 * pods/binding, as upstream's BindingREST: the one way to set a pod's spec.nodeName (an update may
 * not: pod-update.ts), and only once. The pod is written straight to storage, around the pod
 * strategy, with the binding's uid and resourceVersion as preconditions: nodeName, the binding's
 * annotations and the PodScheduled condition. A pod already assigned, being deleted or still gated
 * is a 409 on pods/binding. RBAC decides who may bind (the scheduler's `create` on pods/binding;
 * a namespace's edit and admin roles do not grant it, nor does a node's role).
 */
import type { Binding, Pod } from '../../../api/pods.js';
import type { KObject } from '../../../api/meta.js';
import { errors, type Target } from '../../http/errors.js';
import { notSupported, required, type FieldError } from '../../http/field-errors.js';
import { isRaceError, storageKey, type Store } from '../../storage/store.js';
import { timestampSeconds } from '../../../lib/rfc3339.js';
import { storagePreconditionFailed } from '../generic/preconditions.js';
import type { RequestContext, VirtualCreate } from '../generic/strategy.js';

const PODS: Target = { group: '', resource: 'pods' };
const BINDINGS: Target = { group: '', resource: 'pods/binding' };

/** ValidatePodBinding: a Node (or no kind) named. */
function validateBinding(b: Binding): FieldError[] {
  const errs: FieldError[] = [];
  const kind = b.target?.kind ?? '';
  if (kind !== '' && kind !== 'Node') errs.push(notSupported('target.kind', kind, ['Node', '<empty>']));
  if (!b.target?.name) errs.push(required('target.name'));
  return errs;
}

/** Why a pod cannot be bound (upstream's setPodNodeAndMetadata): a 409 on pods/binding. */
function refuseBinding(pod: Pod): void {
  const name = pod.metadata?.name ?? '';
  const refuse = (why: string): never => {
    throw errors.conflict({ ...BINDINGS, name }, why);
  };
  if (pod.metadata?.deletionTimestamp) refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
  if (pod.spec?.nodeName) refuse(`pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
  if (Array.isArray(pod.spec?.schedulingGates) && pod.spec.schedulingGates.length > 0) refuse(`pod ${name} has non-empty .spec.schedulingGates`);
}

/** The conditions with PodScheduled True; as UpdatePodCondition, its transition time moves only when its status does. */
function scheduled(conditions: NonNullable<NonNullable<Pod['status']>['conditions']>, now: Date): typeof conditions {
  const before = conditions.find((c) => c.type === 'PodScheduled');
  const lastTransitionTime = before?.status === 'True' ? before.lastTransitionTime : timestampSeconds(now);
  return [...conditions.filter((c) => c !== before), { ...before, type: 'PodScheduled', status: 'True', lastTransitionTime }];
}

/** The pod bound to `nodeName`, with the binding's annotations. */
function bound(pod: Pod, binding: Binding, nodeName: string, now: Date): Pod {
  refuseBinding(pod);
  const { resourceVersion: _, ...metadata } = pod.metadata ?? {};
  const annotations = binding.metadata?.annotations;
  if (annotations) metadata.annotations = { ...metadata.annotations, ...annotations };
  return { ...pod, metadata, spec: { ...pod.spec, nodeName }, status: { ...pod.status, conditions: scheduled(pod.status?.conditions ?? [], now) } };
}

/** The binding's preconditions on the pod at `key`: its uid and resourceVersion, when given. */
function checkPreconditions(key: string, pod: Pod, binding: Binding): void {
  const target = { ...PODS, name: pod.metadata?.name ?? '' };
  const uid = binding.metadata?.uid;
  if (uid && uid !== pod.metadata?.uid) throw storagePreconditionFailed(target, key, 'UID', uid, pod.metadata?.uid);
  const rv = binding.metadata?.resourceVersion;
  if (rv && rv !== pod.metadata?.resourceVersion) throw storagePreconditionFailed(target, key, 'ResourceVersion', rv, pod.metadata?.resourceVersion);
}

/** The Status a create of a binding answers (upstream's handler fills in 201). */
const SUCCESS: KObject = { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Success', code: 201 } as KObject;

export function podBinding(store: Store): VirtualCreate<Binding> {
  return {
    async create(binding: Binding, ctx: RequestContext, target): Promise<KObject> {
      const name = target.name ?? '';
      const namespace = target.namespace ?? '';
      if (binding.metadata?.name !== name) throw errors.badRequest('name in URL does not match name in Binding object');
      if (binding.metadata.namespace && binding.metadata.namespace !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      const errs = validateBinding(binding);
      if (errs.length > 0) throw errors.invalid('Binding', '', name, errs);
      const key = storageKey('', 'pods', namespace, name);
      // A compare-and-swap lost to another write is tried again on what that write left.
      for (;;) {
        const cur = await store.get(key);
        if (!cur) throw errors.notFound({ ...PODS, name });
        const pod = cur.object as Pod;
        checkPreconditions(key, pod, binding);
        const next = bound(pod, binding, binding.target.name ?? '', ctx.now);
        if (ctx.dryRun) return SUCCESS;
        try {
          await store.update(key, next, cur.revision);
          return SUCCESS;
        } catch (e) {
          if (!isRaceError(e)) throw e;
        }
      }
    },
  };
}
