/**
 * ServiceAccount admission (plugin/pkg/admission/serviceaccount upstream, on by default), its
 * mirror-pod rule: whoever creates a mirror pod, it may name no ServiceAccount and no Secret and
 * project no ServiceAccount token, since its kubelet runs it from a static manifest with no API
 * credentials to give it. The plugin's mutation of other pods (the default account) is the pod
 * strategy's `prepareForCreate` here, which leaves mirror pods as written, as upstream's does; this
 * server mounts no token volume and has no mountable-secrets enforcement to apply.
 */
import { isMirrorPod, type Pod } from '../../api/pods.js';
import { findResource, type ResourceOf } from '../../api/resources.js';
import { errors } from '../http/errors.js';
import { podReferences, projectedSources } from '../authorization/node/pod-references.js';
import { writesObjectsOf } from '../registry/generic/admission.js';
import type { AdmissionPlugin } from './chain.js';

const podsInfo = findResource('', 'v1', 'pods');
if (!podsInfo) throw new Error('pods missing from RESOURCES');
const PODS: ResourceOf<Pod> = podsInfo;

/** Why upstream refuses `pod` as a mirror pod, or undefined. */
function mirrorPodRefusal(pod: Pod): string | undefined {
  if (podReferences(pod, 'serviceaccounts').size > 0) return 'a mirror pod may not reference service accounts';
  if (podReferences(pod, 'secrets').size > 0) return 'a mirror pod may not reference secrets';
  if (projectedSources(pod).some((p) => p.serviceAccountToken != null)) return 'a mirror pod may not use ServiceAccountToken volume projections';
  return undefined;
}

export const serviceAccountAdmission: AdmissionPlugin = {
  name: 'ServiceAccount',
  validate(a) {
    if (a.operation !== 'CREATE' || a.subresource !== '' || !writesObjectsOf(a, PODS) || !isMirrorPod(a.object)) return undefined;
    const refusal = mirrorPodRefusal(a.object);
    if (refusal !== undefined) throw errors.admissionForbidden({ group: '', resource: 'pods', name: a.name }, refusal);
    return undefined;
  },
};
