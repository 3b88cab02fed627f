/** What the pod admission plugins share: which writes are a pod's own, and how they refuse one. */
import type { Pod } from '../../api/pods.js';
import { findResource, type ResourceOf } from '../../api/resources.js';
import { errors, type ApiError } from '../http/errors.js';
import { type AdmissionAttributes, writesObjectsOf } from '../registry/generic/admission.js';

const podsInfo = findResource('', 'v1', 'pods');
if (!podsInfo) throw new Error('pods missing from RESOURCES');
export const PODS: ResourceOf<Pod> = podsInfo;

/** Whether `a` writes a pod itself: upstream's pod plugins ignore every subresource, /status included. */
export function writesPod(a: AdmissionAttributes): a is AdmissionAttributes<Pod> {
  return a.subresource === '' && writesObjectsOf(a, PODS);
}

/** A plugin's 403 on the pod `a` writes (admission.NewForbidden). */
export function podForbidden(a: AdmissionAttributes, message: string): ApiError {
  return errors.admissionForbidden({ group: '', resource: 'pods', name: a.name }, message);
}
