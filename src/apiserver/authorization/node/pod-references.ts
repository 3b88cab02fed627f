/**
 * What a pod's spec names, by kind (upstream's VisitPodSecretNames and VisitPodConfigmapNames, and
 * the pod's ServiceAccount): the objects the Node authorizer lets the pod's node read, and what
 * NodeRestriction forbids a mirror pod to name. Volume sources, env.valueFrom and envFrom are
 * free-form in the served schema: they are read as untyped JSON, which finds a name only where it
 * has the shape upstream's types give it.
 */
import { isMirrorPod, type Pod, type PodSpec, type Volume } from '../../../api/pods.js';
import { record, records, text } from '../../../lib/json.js';

export type ReferencedKind = 'secrets' | 'configmaps' | 'serviceaccounts';

export { MIRROR_POD_ANNOTATION } from '../../../api/pods.js';

/** Volume sources whose `secretRef` names a Secret of the pod's namespace. */
const SECRET_REF_SOURCES = ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'];

/** Every container as untyped JSON: ephemeral containers are free-form in the served schema. */
function containersOf(spec: PodSpec): Record<string, unknown>[] {
  return [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...records(spec.ephemeralContainers)];
}

/** The Secrets a volume names: its own source's reference, or a projection's. */
function volumeSecrets(v: Volume): unknown[] {
  const names = [record(v.secret).secretName, record(v.azureFile).secretName, record(record(v.csi).nodePublishSecretRef).name];
  for (const source of SECRET_REF_SOURCES) names.push(record(record(v[source as keyof Volume]).secretRef).name);
  for (const src of records(record(v.projected).sources)) names.push(record(src.secret).name);
  return names;
}

/** The ConfigMaps a volume names: its own source, or a projection's. */
function volumeConfigMaps(v: Volume): unknown[] {
  const names = [record(v.configMap).name];
  for (const src of records(record(v.projected).sources)) names.push(record(src.configMap).name);
  return names;
}

/** The ConfigMaps or Secrets a container names through env.valueFrom and envFrom. */
function containerReferences(c: Record<string, unknown>, secret: boolean): unknown[] {
  const names = records(c.env).map((e) => record(record(e.valueFrom)[secret ? 'secretKeyRef' : 'configMapKeyRef']).name);
  for (const e of records(c.envFrom)) names.push(record(secret ? e.secretRef : e.configMapRef).name);
  return names;
}

/** Every projected volume's sources, as untyped JSON (their kinds are free-form in the served schema). */
export function projectedSources(pod: Pod): Record<string, unknown>[] {
  return (pod.spec?.volumes ?? []).flatMap((v) => records(record(v.projected).sources));
}

/** The non-empty names among `values`. */
function names(values: unknown[]): Set<string> {
  return new Set(values.map(text).filter((n) => n !== ''));
}

/** The names of `kind` a pod spec references (volumes, projections, env, envFrom, pull secrets, its ServiceAccount). */
export function podReferences(pod: Pod, kind: ReferencedKind): Set<string> {
  const spec = pod.spec ?? {};
  if (kind === 'serviceaccounts') return names([spec.serviceAccountName || spec.serviceAccount]);
  const secret = kind === 'secrets';
  const found: unknown[] = secret ? (spec.imagePullSecrets ?? []).map((s) => s.name) : [];
  for (const v of spec.volumes ?? []) found.push(...(secret ? volumeSecrets(v) : volumeConfigMaps(v)));
  for (const c of containersOf(spec)) found.push(...containerReferences(c, secret));
  return names(found);
}

/**
 * What a pod grants the node it is bound to, by kind: nothing until it is bound, and nothing
 * beyond the pod itself for a mirror pod (upstream's graph adds no edges for one, defence in depth
 * behind NodeRestriction, which refuses mirror pods that name anything).
 */
export function podGrants(pod: Pod, kind: ReferencedKind): Set<string> {
  if (!pod.spec?.nodeName || isMirrorPod(pod)) return new Set();
  return podReferences(pod, kind);
}
