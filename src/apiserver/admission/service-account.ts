/**
 * ServiceAccount admission (plugin/pkg/admission/serviceaccount upstream, on by default), its
 * mutating phase: a new pod runs as a ServiceAccount that exists (naming a missing one is a 403),
 * gets a projected volume with that account's token, the cluster CA and its namespace mounted in
 * every init and app container (unless the pod, else the account, turns automounting off, or the
 * container mounts that path itself), and the account's image pull secrets when it names none.
 * Ephemeral containers cannot be set on create, so they get no mount. A mirror pod is left as its
 * kubelet wrote it (the kubelet deletes a mirror pod that differs from its manifest), and may name
 * no ServiceAccount and no Secret and project no token: its kubelet has no API credentials to give
 * it. The default account name is set by the pod strategy's `prepareForCreate`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KObject } from '../../api/meta.js';
import { isMirrorPod, type Pod, type PodSpec, type Volume } from '../../api/pods.js';
import { findResource, type ResourceOf } from '../../api/resources.js';
import { podReferences, projectedSources } from '../authorization/node/pod-references.js';
import type { AdmissionAttributes } from '../registry/generic/admission.js';
import { generateName } from '../validation/names.js';
import type { AdmissionPlugin } from './chain.js';
import { podForbidden, writesPod } from './pods.js';

interface ServiceAccount extends KObject {
  automountServiceAccountToken?: boolean;
  imagePullSecrets?: { name?: string }[];
}

const serviceAccountsInfo = findResource('', 'v1', 'serviceaccounts');
if (!serviceAccountsInfo) throw new Error('serviceaccounts missing from RESOURCES');
const SERVICE_ACCOUNTS: ResourceOf<ServiceAccount> = serviceAccountsInfo;

/** The account the serviceaccounts controller makes in every namespace, and upstream's tries at finding it. */
const DEFAULT_ACCOUNT = 'default';
const DEFAULT_ACCOUNT_ATTEMPTS = 10;

/** Where upstream mounts the token volume (DefaultAPITokenMountPath), and the volume's name prefix. */
const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_VOLUME_PREFIX = 'kube-api-access-';

/**
 * The token volume's source (TokenVolumeSource), defaulted as stored: it is added after defaulting.
 * 3607 s is upstream's WarnOnlyBoundTokenExpirationSeconds, which marks tokens a kubelet refreshes.
 */
function tokenVolumeSource(): Record<string, unknown> {
  return {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  };
}

/** Why upstream refuses `pod` as a mirror pod, or undefined. */
function mirrorPodRefusal(pod: Pod): string | undefined {
  if (podReferences(pod, 'serviceaccounts').size > 0) return 'a mirror pod may not reference service accounts';
  if (podReferences(pod, 'secrets').size > 0) return 'a mirror pod may not reference secrets';
  if (projectedSources(pod).some((p) => p.serviceAccountToken != null)) return 'a mirror pod may not use ServiceAccountToken volume projections';
  return undefined;
}

/**
 * The pod's ServiceAccount, or a 403 when it is missing. The `default` one is looked for again a
 * few times, 100-200 ms apart as upstream, in case the controller has not made it yet in a new
 * namespace (or another server made the namespace). Answers at once when the store can tell it.
 */
function serviceAccountOf(a: AdmissionAttributes<Pod>, name: string): ServiceAccount | Promise<ServiceAccount> {
  const namespace = a.namespace ?? '';
  const now = a.ctx.objects.readNow?.(SERVICE_ACCOUNTS, namespace, name);
  if (now) return now;
  const attempts = name === DEFAULT_ACCOUNT ? DEFAULT_ACCOUNT_ATTEMPTS : 1;
  const interval = 100 + Math.floor(Math.random() * 100);
  const attempt = async (i: number): Promise<ServiceAccount> => {
    if (i > 0) await sleep(interval);
    const found = await a.ctx.objects.get(SERVICE_ACCOUNTS, namespace, name);
    if (found) return found;
    if (i + 1 < attempts) return attempt(i + 1);
    throw podForbidden(a, `error looking up service account ${namespace}/${name}: serviceaccount ${JSON.stringify(name)} not found`);
  };
  return attempt(0);
}

/** mountServiceAccountToken: an existing `kube-api-access-` volume is reused; a container mounting the path keeps its own. */
function mountToken(spec: PodSpec): void {
  const existing = spec.volumes?.find((v) => v.name?.startsWith(TOKEN_VOLUME_PREFIX));
  const name = existing?.name || generateName(TOKEN_VOLUME_PREFIX);
  let needed = false;
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    if (c.volumeMounts?.some((m) => m.mountPath === TOKEN_MOUNT_PATH)) continue;
    c.volumeMounts = [...(c.volumeMounts ?? []), { name, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
    needed = true;
  }
  if (!existing && needed) spec.volumes = [...(spec.volumes ?? []), { name, projected: tokenVolumeSource() } as Volume];
}

function applyServiceAccount(pod: Pod, sa: ServiceAccount): void {
  const spec = (pod.spec ??= {});
  // The pod's choice wins over the account's; both unset means mount (upstream's shouldAutomount).
  if (spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true) mountToken(spec);
  const pullSecrets = sa.imagePullSecrets ?? [];
  if ((spec.imagePullSecrets ?? []).length === 0 && pullSecrets.length > 0) {
    spec.imagePullSecrets = pullSecrets.map((s) => ({ name: s.name ?? '' }));
  }
}

export const serviceAccountAdmission: AdmissionPlugin = {
  name: 'ServiceAccount',
  admit(a) {
    if (a.operation !== 'CREATE' || !writesPod(a)) return undefined;
    const pod = a.object;
    if (isMirrorPod(pod)) {
      const refusal = mirrorPodRefusal(pod);
      if (refusal !== undefined) throw podForbidden(a, refusal);
      return undefined;
    }
    const sa = serviceAccountOf(a, pod.spec?.serviceAccountName || DEFAULT_ACCOUNT);
    if (sa instanceof Promise) return sa.then((found) => applyServiceAccount(pod, found));
    applyServiceAccount(pod, sa);
    return undefined;
  },
};
