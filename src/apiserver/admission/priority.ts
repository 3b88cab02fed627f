/**
 * Priority admission (plugin/pkg/admission/priority upstream, on by default). A new pod's priority
 * comes from its PriorityClass: none named (and no global default class, which this server cannot
 * have) is 0 with PreemptLowerPriority. This server serves no PriorityClass API, so the only classes
 * are the two kube-apiserver creates at start; naming another is upstream's 403 for a missing class.
 * An update keeps the priority the create set, so a PUT that leaves it out is not a spec change.
 */
import type { Pod, PodSpec } from '../../api/pods.js';
import type { AdmissionAttributes } from '../registry/generic/admission.js';
import type { AdmissionPlugin } from './chain.js';
import { podForbidden, writesPod } from './pods.js';

const PREEMPT_LOWER_PRIORITY = 'PreemptLowerPriority';

/** The system classes' values (scheduling.SystemCriticalPriority and the node-critical one above it). */
const SYSTEM_CLASSES: ReadonlyMap<string, number> = new Map([
  ['system-node-critical', 2_000_001_000],
  ['system-cluster-critical', 2_000_000_000],
]);

/** The create: the class's priority and preemption policy, and a 403 when the pod asked for others. */
function admitNewPod(a: AdmissionAttributes<Pod>, spec: PodSpec): void {
  const className = spec.priorityClassName ?? '';
  const priority = className === '' ? 0 : SYSTEM_CLASSES.get(className);
  if (priority === undefined) throw podForbidden(a, `no PriorityClass with name ${className} was found`);
  if (spec.priority !== undefined && spec.priority !== priority) {
    throw podForbidden(
      a,
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
    );
  }
  spec.priority = priority;
  if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== PREEMPT_LOWER_PRIORITY) {
    throw podForbidden(
      a,
      `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${PREEMPT_LOWER_PRIORITY} from the given PriorityClass name`,
    );
  }
  spec.preemptionPolicy = PREEMPT_LOWER_PRIORITY;
}

export const priorityAdmission: AdmissionPlugin = {
  name: 'Priority',
  admit(a) {
    const spec = writesPod(a) ? a.object.spec : undefined;
    if (!spec) return undefined;
    if (a.operation === 'CREATE') admitNewPod(a as AdmissionAttributes<Pod>, spec);
    if (a.operation === 'UPDATE') {
      const old = (a.oldObject as Pod | undefined)?.spec;
      if (spec.priority === undefined && old?.priority !== undefined) spec.priority = old.priority;
      if (spec.preemptionPolicy === undefined && old?.preemptionPolicy !== undefined) spec.preemptionPolicy = old.preemptionPolicy;
    }
    return undefined;
  },
};
