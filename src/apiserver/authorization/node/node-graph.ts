/**
 * The relationships the Node authorizer asks about: which objects a node may reach through the pods
 * bound to it (upstream's node authorizer graph). Our API serves no PersistentVolume(Claim)s,
 * VolumeAttachments, ResourceClaims or ResourceSlices, so upstream's graph reduces to two levels:
 *
 *   node <- pod <- secret, configmap, serviceaccount      node <- podcertificaterequest
 *
 * `NodeGraph` keeps them in memory, fed by store reflectors (storage/reflector.ts) of pods and
 * PodCertificateRequests as the RBAC index is fed, so a node's request costs no store read: per
 * pod only its node and the vertices it grants (never the pod itself), and per Secret, ConfigMap or
 * ServiceAccount the number of pods on each node that name it (upstream's destination index), so
 * every question is a map lookup. A pod enters when bound (spec.nodeName set, at its creation or
 * through pods/binding), and every event recomputes its edges: a deleted one leaves the graph. (An
 * update cannot change a pod's node or what it names: registry/core/pod-update.ts.)
 *
 * `storeRelations` answers the same questions by reading the store, as the authorizer did before
 * the graph: the authorizer asks it while the graph is not synced, and on a store whose writes may
 * reach the graph after they are acknowledged (etcd) to confirm what the graph would deny.
 */
import { Histogram, type Registry } from 'prom-client';
import type { Pod } from '../../../api/pods.js';
import { PCR_RESOURCE, PCR_VERSIONS, type PodCertificateRequestWire } from '../../../api/pod-certificates.js';
import { findResource, type ResourceOf } from '../../../api/resources.js';
import { PODS } from '../../authentication/resource-infos.js';
import type { ObjectReader } from '../../authentication/types.js';
import { Reflector } from '../../storage/reflector.js';
import { storageKey, type Store, type StoreEvent, type StoredObject } from '../../storage/store.js';
import { podGrants, type ReferencedKind } from './pod-references.js';

const pcrInfo = findResource('certificates.k8s.io', PCR_VERSIONS[0], PCR_RESOURCE);
if (!pcrInfo) throw new Error('podcertificaterequests missing from RESOURCES');
const PCRS: ResourceOf<PodCertificateRequestWire> = pcrInfo;

/** The kinds a node reaches only through the graph. */
export type RelatedKind = ReferencedKind | 'pods' | 'podcertificaterequests';

const REFERENCED: readonly ReferencedKind[] = ['secrets', 'configmaps', 'serviceaccounts'];

/** Whether the object `namespace/name` of `kind` is related to node `nodeName`. */
export interface NodeRelations {
  related(nodeName: string, kind: RelatedKind, namespace: string, name: string): boolean | Promise<boolean>;
}

/**
 * The relations as the store holds them, each question a read: the object for pods and
 * PodCertificateRequests, the namespace's pods for what pods name. Those lists are shared by the
 * questions asked before the next turn of the event loop, when they start (so after every one of
 * those questions was asked, and every pod acknowledged before it is seen): a stream of refused GETs
 * from a node on etcd costs a list per namespace and turn, not per request.
 */
export function storeRelations(objects: ObjectReader): NodeRelations {
  let batch: Promise<Map<string, Promise<Pod[]>>> | undefined;
  const podsOf = async (namespace: string): Promise<Pod[]> => {
    batch ??= new Promise((resolve) =>
      setImmediate(() => {
        batch = undefined;
        resolve(new Map());
      }),
    );
    const lists = await batch;
    let pods = lists.get(namespace);
    if (!pods) lists.set(namespace, (pods = objects.list(PODS, namespace)));
    return pods;
  };
  return {
    async related(nodeName, kind, namespace, name) {
      if (kind === 'pods') return ((await objects.get(PODS, namespace, name))?.spec?.nodeName ?? '') === nodeName;
      if (kind === 'podcertificaterequests') return ((await objects.get(PCRS, namespace, name))?.spec?.nodeName ?? '') === nodeName;
      return (await podsOf(namespace)).some((p) => p.spec?.nodeName === nodeName && podGrants(p, kind).has(name));
    },
  };
}

/** A Secret, ConfigMap or ServiceAccount some bound pod names: how many pods on each node name it. */
interface Vertex {
  key: string;
  nodes: Map<string, number>;
}

/** A bound pod: its node, and the vertices it grants that node. */
interface PodEdges {
  nodeName: string;
  grants: Vertex[];
}

const vertexKey = (kind: ReferencedKind, namespace: string, name: string): string => `${kind}/${namespace}/${name}`;

/** Upstream's graph operations, as node_authorizer_graph_actions_duration_seconds labels them. */
type GraphAction = 'AddPod' | 'DeletePod' | 'AddPodCertificateRequest' | 'DeletePodCertificateRequest';

/** What a graph action costs, as upstream's histogram (0.1 ms to about 200 ms); without a registry, nothing. */
function actionTimer(registry: Registry | undefined): <T>(action: GraphAction, run: () => T) => T {
  if (!registry) return (_action, run) => run();
  const histogram = new Histogram({
    name: 'node_authorizer_graph_actions_duration_seconds',
    help: 'Histogram of duration of graph actions in node authorizer.',
    labelNames: ['operation'],
    buckets: Array.from({ length: 12 }, (_, i) => 0.0001 * 2 ** i),
    registers: [registry],
  });
  // Children bound once: a pod event should not pay a label lookup.
  const children = new Map<GraphAction, { observe(v: number): void }>();
  return (action, run) => {
    const start = performance.now();
    try {
      return run();
    } finally {
      let child = children.get(action);
      if (!child) children.set(action, (child = histogram.labels(action)));
      child.observe((performance.now() - start) / 1000);
    }
  };
}

export class NodeGraph implements NodeRelations {
  /** Bound pods by storage key. */
  private readonly pods = new Map<string, PodEdges>();
  private readonly vertices = new Map<string, Vertex>();
  /** The node of each PodCertificateRequest, by storage key. */
  private readonly pcrs = new Map<string, string>();
  private readonly reflectors: Reflector[];
  private readonly deliversBeforeAck: boolean;
  private readonly timed: <T>(action: GraphAction, run: () => T) => T;

  /** `registry`: where node_authorizer_graph_actions_duration_seconds is registered (upstream's name). */
  constructor(store: Store, registry?: Registry) {
    this.deliversBeforeAck = store.deliversBeforeAck === true;
    this.timed = actionTimer(registry);
    this.reflectors = [
      new Reflector(store, storageKey('', PODS.plural, undefined), {
        replace: (items) => this.replacePods(items),
        apply: (e) => this.applyPod(e),
      }),
      new Reflector(store, storageKey(PCRS.group, PCRS.plural, undefined), {
        replace: (items) => this.replacePcrs(items),
        apply: (e) => this.applyPcr(e),
      }),
    ];
  }

  /** Whether pods and PodCertificateRequests were listed and are being watched: until then, callers read the store. */
  ready(): boolean {
    return this.reflectors.every((r) => r.synced);
  }

  /**
   * Whether the graph holds every write acknowledged before now, so that what it does not relate,
   * the store would not relate either: synced, on a store that delivers a write's watch events
   * before acknowledging it (Store.deliversBeforeAck).
   */
  current(): boolean {
    return this.deliversBeforeAck && this.ready();
  }

  related(nodeName: string, kind: RelatedKind, namespace: string, name: string): boolean {
    if (kind === 'pods') return this.pods.get(storageKey('', PODS.plural, namespace, name))?.nodeName === nodeName;
    if (kind === 'podcertificaterequests') return this.pcrs.get(storageKey(PCRS.group, PCRS.plural, namespace, name)) === nodeName;
    return (this.vertices.get(vertexKey(kind, namespace, name))?.nodes.get(nodeName) ?? 0) > 0;
  }

  /** Bound pods and the vertices they name, for the memory figures. */
  size(): { pods: number; vertices: number } {
    return { pods: this.pods.size, vertices: this.vertices.size };
  }

  stop(): void {
    for (const reflector of this.reflectors) reflector.stop();
  }

  private replacePods(items: StoredObject[]): void {
    for (const key of [...this.pods.keys()]) this.removePod(key);
    for (const item of items) this.setPod(item.key, item.object);
  }

  private applyPod(e: StoreEvent): void {
    if (e.type === 'DELETED') this.removePod(e.key);
    else this.setPod(e.key, e.object);
  }

  /** Re-derives the pod's edges from its current state; unchanged ones are left as they are. */
  private setPod(key: string, pod: Pod): void {
    const nodeName = pod.spec?.nodeName ?? '';
    if (nodeName === '') {
      this.removePod(key);
      return;
    }
    const namespace = pod.metadata?.namespace ?? '';
    const keys = REFERENCED.flatMap((kind) => [...podGrants(pod, kind)].map((name) => vertexKey(kind, namespace, name)));
    const old = this.pods.get(key);
    if (old?.nodeName === nodeName && old.grants.length === keys.length && old.grants.every((v, i) => v.key === keys[i])) return;
    this.timed('AddPod', () => {
      this.unlinkPod(key);
      const grants = keys.map((k) => this.vertex(k));
      for (const v of grants) v.nodes.set(nodeName, (v.nodes.get(nodeName) ?? 0) + 1);
      this.pods.set(key, { nodeName, grants });
    });
  }

  private removePod(key: string): void {
    if (this.pods.has(key)) this.timed('DeletePod', () => this.unlinkPod(key));
  }

  private unlinkPod(key: string): void {
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    for (const v of old.grants) {
      const count = (v.nodes.get(old.nodeName) ?? 0) - 1;
      if (count > 0) v.nodes.set(old.nodeName, count);
      else v.nodes.delete(old.nodeName);
      if (v.nodes.size === 0) this.vertices.delete(v.key);
    }
  }

  private vertex(key: string): Vertex {
    let v = this.vertices.get(key);
    if (!v) this.vertices.set(key, (v = { key, nodes: new Map() }));
    return v;
  }

  private replacePcrs(items: StoredObject[]): void {
    this.pcrs.clear();
    for (const item of items) this.setPcr(item.key, item.object);
  }

  private applyPcr(e: StoreEvent): void {
    if (e.type === 'DELETED') this.removePcr(e.key);
    else this.setPcr(e.key, e.object);
  }

  private setPcr(key: string, pcr: PodCertificateRequestWire): void {
    const nodeName = pcr.spec?.nodeName ?? '';
    if (!nodeName) this.removePcr(key);
    else if (this.pcrs.get(key) !== nodeName) this.timed('AddPodCertificateRequest', () => this.pcrs.set(key, nodeName));
  }

  private removePcr(key: string): void {
    if (this.pcrs.has(key)) this.timed('DeletePodCertificateRequest', () => this.pcrs.delete(key));
  }
}
