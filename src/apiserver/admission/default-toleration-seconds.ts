/**
 * DefaultTolerationSeconds admission (plugin/pkg/admission/defaulttolerationseconds upstream, on by
 * default). A pod that does not tolerate a node's not-ready or unreachable NoExecute taint gets a
 * 300 s toleration of it on create and on update, so the taint manager evicts it five minutes after
 * its node goes away instead of at once. A toleration with no key, or no effect, already covers one.
 */
import type { AdmissionPlugin } from './chain.js';
import { writesPod } from './pods.js';

const DEFAULT_SECONDS = 300;
const TAINTS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'];

export const defaultTolerationSeconds: AdmissionPlugin = {
  name: 'DefaultTolerationSeconds',
  admit(a) {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !writesPod(a) || !a.object.spec) return undefined;
    const spec = a.object.spec;
    const tolerations = spec.tolerations ?? [];
    const tolerates = (key: string): boolean =>
      tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === 'NoExecute'));
    const added = TAINTS.filter((key) => !tolerates(key));
    if (added.length === 0) return undefined;
    spec.tolerations = [
      ...tolerations,
      ...added.map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: DEFAULT_SECONDS })),
    ];
    return undefined;
  },
};
