/**
 * The relationships the Node authorizer asks about (upstream keeps them as a graph fed by
 * informers): which objects a node may reach through the pods bound to it. Here they are read on
 * demand from storage, since a node's pods in one namespace are few and always current.
 */
import type { Pod, PodSpec, Volume } from '../../../api/pods.js';
import { findResource, type ResourceOf } from '../../../api/resources.js';
import { record, records, text } from '../../../lib/json.js';
import type { ObjectReader } from '../../authentication/types.js';

const podsInfo = findResource('', 'v1', 'pods');
if (!podsInfo) throw new Error('pods missing from RESOURCES');
const PODS: ResourceOf<Pod> = podsInfo;

export type RelatedKind = 'secrets' | 'configmaps' | 'serviceaccounts';

/** Every container as untyped JSON: ephemeral containers are free-form in the served schema. */
function containersOf(spec: PodSpec): Record<string, unknown>[] {
  return [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...records(spec.ephemeralContainers)];
}

/** The Secret (or ConfigMap) names a volume's source and projected sources name. */
function volumeReferences(v: Volume, secret: boolean): unknown[] {
  const names = [secret ? record(v.secret).secretName : record(v.configMap).name];
  for (const src of records(record(v.projected).sources)) names.push(record(secret ? src.secret : src.configMap).name);
  return names;
}

/**
 * The names of `kind` a pod spec references (volumes, projections, env, envFrom, pull secrets).
 * Volume sources, env.valueFrom and envFrom are free-form in the served schema: they are read as
 * untyped JSON, which finds a name only where it has the shape upstream's types give it.
 */
export function podReferences(pod: Pod, kind: RelatedKind): Set<string> {
  const spec = pod.spec ?? {};
  const out = new Set<string>();
  const add = (name: unknown): void => {
    if (text(name)) out.add(text(name));
  };
  if (kind === 'serviceaccounts') {
    add(spec.serviceAccountName || spec.serviceAccount);
    return out;
  }
  const secret = kind === 'secrets';
  if (secret) for (const s of spec.imagePullSecrets ?? []) add(s.name);
  for (const v of spec.volumes ?? []) for (const name of volumeReferences(v, secret)) add(name);
  for (const c of containersOf(spec)) {
    for (const e of records(c.env)) add(record(record(e.valueFrom)[secret ? 'secretKeyRef' : 'configMapKeyRef']).name);
    for (const e of records(c.envFrom)) add(record(secret ? e.secretRef : e.configMapRef).name);
  }
  return out;
}

/** Whether a pod bound to `nodeName` in `namespace` references the object `name` of `kind`. */
export async function reachableFromNode(
  objects: ObjectReader,
  nodeName: string,
  kind: RelatedKind,
  namespace: string,
  name: string,
): Promise<boolean> {
  const pods = await objects.list(PODS, namespace);
  return pods.some((p) => (p.spec?.nodeName ?? '') === nodeName && podReferences(p, kind).has(name));
}

/** Whether the pod `namespace/name` exists and is bound to `nodeName`. */
export async function podOnNode(objects: ObjectReader, nodeName: string, namespace: string, name: string): Promise<boolean> {
  const pod = await objects.get(PODS, namespace, name);
  return pod !== undefined && (pod.spec?.nodeName ?? '') === nodeName;
}
