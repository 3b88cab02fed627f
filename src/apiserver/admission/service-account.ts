/**
 * ServiceAccount admission (plugin/pkg/admission/serviceaccount upstream, on by default). A new pod
 * runs as a ServiceAccount that exists: naming a missing one is a 403. Its mirror-pod rule: whoever
 * creates a mirror pod, it may name no ServiceAccount and no Secret and project no ServiceAccount
 * token, since its kubelet runs it from a static manifest with no API credentials to give it. The
 * plugin's mutation of other pods (the default account) is the pod strategy's `prepareForCreate`
 * here, which leaves mirror pods as written, as upstream's does; this server mounts no token volume
 * and has no mountable-secrets enforcement to apply.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KObject } from '../../api/meta.js';
import { isMirrorPod, type Pod } from '../../api/pods.js';
import { findResource, type ResourceOf } from '../../api/resources.js';
import { errors } from '../http/errors.js';
import { podReferences, projectedSources } from '../authorization/node/pod-references.js';
import { type AdmissionAttributes, writesObjectsOf } from '../registry/generic/admission.js';
import type { AdmissionPlugin } from './chain.js';

const podsInfo = findResource('', 'v1', 'pods');
const serviceAccountsInfo = findResource('', 'v1', 'serviceaccounts');
if (!podsInfo || !serviceAccountsInfo) throw new Error('pods or serviceaccounts missing from RESOURCES');
const PODS: ResourceOf<Pod> = podsInfo;
const SERVICE_ACCOUNTS: ResourceOf<KObject> = serviceAccountsInfo;

/** The account the serviceaccounts controller makes in every namespace, and upstream's tries at finding it. */
const DEFAULT_ACCOUNT = 'default';
const DEFAULT_ACCOUNT_ATTEMPTS = 10;

/** Why upstream refuses `pod` as a mirror pod, or undefined. */
function mirrorPodRefusal(pod: Pod): string | undefined {
  if (podReferences(pod, 'serviceaccounts').size > 0) return 'a mirror pod may not reference service accounts';
  if (podReferences(pod, 'secrets').size > 0) return 'a mirror pod may not reference secrets';
  if (projectedSources(pod).some((p) => p.serviceAccountToken != null)) return 'a mirror pod may not use ServiceAccountToken volume projections';
  return undefined;
}

/**
 * Refuses a pod whose ServiceAccount is missing. The `default` one is looked for again a few times,
 * 100-200 ms apart as upstream, in case the controller has not made it yet in a new namespace (or
 * another server made the namespace). Answers at once when the store can tell it has the account.
 */
function requireServiceAccount(a: AdmissionAttributes<Pod>): Promise<void> | undefined {
  const namespace = a.namespace ?? '';
  const name = a.object.spec?.serviceAccountName ?? DEFAULT_ACCOUNT;
  if (a.ctx.objects.readNow?.(SERVICE_ACCOUNTS, namespace, name)) return undefined;
  const attempts = name === DEFAULT_ACCOUNT ? DEFAULT_ACCOUNT_ATTEMPTS : 1;
  const interval = 100 + Math.floor(Math.random() * 100);
  const attempt = async (i: number): Promise<void> => {
    if (i > 0) await sleep(interval);
    if (await a.ctx.objects.get(SERVICE_ACCOUNTS, namespace, name)) return;
    if (i + 1 < attempts) return attempt(i + 1);
    const missing = `serviceaccount ${JSON.stringify(name)} not found`;
    throw errors.admissionForbidden({ group: '', resource: 'pods', name: a.name }, `error looking up service account ${namespace}/${name}: ${missing}`);
  };
  return attempt(0);
}

export const serviceAccountAdmission: AdmissionPlugin = {
  name: 'ServiceAccount',
  validate(a) {
    if (a.operation !== 'CREATE' || a.subresource !== '' || !writesObjectsOf(a, PODS)) return undefined;
    if (!isMirrorPod(a.object)) return requireServiceAccount(a);
    const refusal = mirrorPodRefusal(a.object);
    if (refusal !== undefined) throw errors.admissionForbidden({ group: '', resource: 'pods', name: a.name }, refusal);
    return undefined;
  },
};
