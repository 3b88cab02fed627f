/**
 * The relationships the Node authorizer asks about (upstream keeps them as a graph fed by
 * informers): which objects a node may reach through the pods bound to it. Here they are read on
 * demand from storage, since a node's pods in one namespace are few and always current.
 */
import type { KObject } from '../../../api/meta.js';
import { findResource, type ResourceInfo } from '../../../api/resources.js';
import { record, records, text } from '../../../lib/json.js';
import type { ObjectReader } from '../../authentication/types.js';

const podsInfo = findResource('', 'v1', 'pods');
if (!podsInfo) throw new Error('pods missing from RESOURCES');
const PODS: ResourceInfo = podsInfo;

export type RelatedKind = 'secrets' | 'configmaps' | 'serviceaccounts';

function containersOf(spec: Record<string, unknown>): Record<string, unknown>[] {
  return [...records(spec.containers), ...records(spec.initContainers), ...records(spec.ephemeralContainers)];
}

/** The names of `kind` a pod spec references (volumes, projections, env, envFrom, pull secrets). */
export function podReferences(pod: KObject, kind: RelatedKind): Set<string> {
  const spec = record(pod.spec);
  const out = new Set<string>();
  const add = (name: unknown): void => {
    if (text(name)) out.add(text(name));
  };
  if (kind === 'serviceaccounts') {
    add(text(spec.serviceAccountName) || text(spec.serviceAccount));
    return out;
  }
  const secret = kind === 'secrets';
  if (secret) for (const s of records(spec.imagePullSecrets)) add(s.name);
  for (const v of records(spec.volumes)) {
    if (secret) add(record(v.secret).secretName);
    else add(record(v.configMap).name);
    for (const src of records(record(v.projected).sources)) add(record(secret ? src.secret : src.configMap).name);
  }
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
  return pods.some((p) => text(record(p.spec).nodeName) === nodeName && podReferences(p, kind).has(name));
}

/** Whether the pod `namespace/name` exists and is bound to `nodeName`. */
export async function podOnNode(objects: ObjectReader, nodeName: string, namespace: string, name: string): Promise<boolean> {
  const pod = await objects.get(PODS, namespace, name);
  return pod !== undefined && text(record(pod.spec).nodeName) === nodeName;
}
