import { Registry } from 'prom-client';
import type { KObject, UserInfo } from '../../../api/meta.js';
import type { Pod } from '../../../api/pods.js';
import { objectReader } from '../../registry/registries.js';
import { MemoryStore } from '../../storage/memory/memory.js';
import { storageKey } from '../../storage/store.js';
import { BreakableStore } from '../../../../test/helpers/breakable-store.js';
import { countedReader, untilReady } from '../../../../test/helpers/counted-reader.js';
import { prng } from '../../../../test/helpers/prng.js';
import { TrailingStore } from '../../../../test/helpers/trailing-store.js';
import { NodeGraph, storeRelations, type RelatedKind } from './node-graph.js';
import { createNodeAuthorizer } from './node-authorizer.js';
import { MIRROR_POD_ANNOTATION, podReferences } from './pod-references.js';

const NODES = ['n1', 'n2', 'n3'];
const NAMESPACES = ['a', 'b'];
const NAMES = ['x', 'y', 'z'];
const KINDS: RelatedKind[] = ['secrets', 'configmaps', 'serviceaccounts', 'pods', 'podcertificaterequests'];

const podKey = (ns: string, name: string): string => storageKey('', 'pods', ns, name);
const pcrKey = (ns: string, name: string): string => storageKey('certificates.k8s.io', 'podcertificaterequests', ns, name);


/** A pod in `ns` naming each object in `refs` (by its own kind of reference), bound to `nodeName` when given. */
function pod(ns: string, name: string, nodeName: string | undefined, refs: { secret?: string; cm?: string; sa?: string } = {}, mirror = false): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, ...(mirror ? { annotations: { [MIRROR_POD_ANNOTATION]: 'm' } } : {}) },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      ...(refs.sa ? { serviceAccountName: refs.sa } : {}),
      volumes: [
        ...(refs.secret ? [{ name: 's', secret: { secretName: refs.secret } }] : []),
        ...(refs.cm ? [{ name: 'p', projected: { sources: [{ configMap: { name: refs.cm } }] } }] : []),
      ],
      containers: [{ name: 'c', image: 'i' }],
    },
  };
}

describe('node graph', () => {
  it('answers every question as the store does, through random binds, rebinds, spec changes, unbinds and deletes', async () => {
    const store = new MemoryStore();
    const graph = new NodeGraph(store);
    const fromStore = storeRelations(objectReader(store));
    await untilReady(graph);
    const random = prng(2693);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    const maybe = (xs: readonly string[]): string | undefined => (random() < 0.3 ? undefined : pick(xs));
    for (let step = 0; step < 300; step++) {
      const ns = pick(NAMESPACES);
      const name = `p${Math.floor(random() * 6)}`;
      const existing = await store.get(podKey(ns, name));
      const op = random();
      if (op < 0.15) {
        const key = pcrKey(ns, pick(NAMES));
        const pcr: KObject = { apiVersion: 'certificates.k8s.io/v1', kind: 'PodCertificateRequest', metadata: { name: 'r', namespace: ns }, spec: { nodeName: pick(NODES) } };
        if (await store.get(key)) await (random() < 0.5 ? store.delete(key) : store.update(key, pcr));
        else await store.create(key, pcr);
      } else if (existing && op < 0.35) {
        await store.delete(podKey(ns, name));
      } else {
        const next = pod(ns, name, maybe(NODES), { secret: maybe(NAMES), cm: maybe(NAMES), sa: maybe(NAMES) }, random() < 0.15);
        await (existing ? store.update(podKey(ns, name), next) : store.create(podKey(ns, name), next));
      }
      for (const node of NODES) {
        for (const kind of KINDS) {
          for (const namespace of NAMESPACES) {
            for (const object of kind === 'pods' ? ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'] : NAMES) {
              const want = await fromStore.related(node, kind, namespace, object);
              if (graph.related(node, kind, namespace, object) !== want) {
                throw new Error(`step ${step}: ${node} ${kind} ${namespace}/${object}: graph ${!want}, store ${want}`);
              }
            }
          }
        }
      }
    }
    graph.stop();
    // Everything deleted, nothing is left behind.
    const all = await store.range({ prefix: '/registry/' });
    for (const item of all.items) await store.delete(item.key);
    const empty = new NodeGraph(store);
    await untilReady(empty);
    expect(empty.size()).toEqual({ pods: 0, vertices: 0 });
    empty.stop();
    await store.close();
  });

  it('drops a pod\'s vertices when it is deleted or unbound, and keeps a shared one while another pod names it', async () => {
    const store = new MemoryStore();
    const graph = new NodeGraph(store);
    await untilReady(graph);
    await store.create(podKey('a', 'p1'), pod('a', 'p1', 'n1', { secret: 's', cm: 'kube-root-ca.crt', sa: 'default' }));
    await store.create(podKey('a', 'p2'), pod('a', 'p2', 'n1', { cm: 'kube-root-ca.crt', sa: 'default' }));
    expect(graph.size()).toEqual({ pods: 2, vertices: 3 });
    await store.delete(podKey('a', 'p1'));
    expect(graph.size()).toEqual({ pods: 1, vertices: 2 });
    expect([graph.related('n1', 'secrets', 'a', 's'), graph.related('n1', 'configmaps', 'a', 'kube-root-ca.crt')]).toEqual([false, true]);
    await store.update(podKey('a', 'p2'), pod('a', 'p2', undefined, { cm: 'kube-root-ca.crt', sa: 'default' }));
    expect(graph.size()).toEqual({ pods: 0, vertices: 0 });
    graph.stop();
    await store.close();
  });

  it("times its actions as upstream's node_authorizer_graph_actions_duration_seconds, only when edges change", async () => {
    const store = new MemoryStore();
    const registry = new Registry();
    const graph = new NodeGraph(store, registry);
    await untilReady(graph);
    await store.create(podKey('a', 'p'), pod('a', 'p', 'n1', { secret: 's' }));
    await store.update(podKey('a', 'p'), { ...pod('a', 'p', 'n1', { secret: 's' }), status: { phase: 'Running' } });
    await store.update(podKey('a', 'p'), pod('a', 'p', 'n2', { secret: 's' }));
    await store.delete(podKey('a', 'p'));
    await store.create(pcrKey('a', 'r'), { apiVersion: 'certificates.k8s.io/v1', kind: 'PodCertificateRequest', metadata: { name: 'r', namespace: 'a' }, spec: { nodeName: 'n1' } });
    const text = await registry.getSingleMetricAsString('node_authorizer_graph_actions_duration_seconds');
    const count = (op: string): number => Number(new RegExp(`_count\\{operation="${op}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    expect(['AddPod', 'DeletePod', 'AddPodCertificateRequest', 'DeletePodCertificateRequest'].map(count)).toEqual([2, 1, 1, 0]);
    graph.stop();
    await store.close();
  });

  it('relates a mirror pod to its node and nothing it names, as upstream adds no edges for one', async () => {
    const store = new MemoryStore();
    const graph = new NodeGraph(store);
    await untilReady(graph);
    await store.create(podKey('a', 'm'), pod('a', 'm', 'n1', { secret: 's', cm: 'c', sa: 'default' }, true));
    const related = (kind: RelatedKind, name: string): boolean => graph.related('n1', kind, 'a', name);
    expect([related('pods', 'm'), related('secrets', 's'), related('configmaps', 'c'), related('serviceaccounts', 'default')]).toEqual([true, false, false, false]);
    expect(await storeRelations(objectReader(store)).related('n1', 'secrets', 'a', 's')).toBe(false);
    graph.stop();
    await store.close();
  });

  it('finds a Secret named by any volume source upstream reads, by env, envFrom and pull secrets, in every kind of container', () => {
    const sources = [
      { secret: { secretName: 's1' } },
      { azureFile: { secretName: 's2', shareName: 'x' } },
      { csi: { driver: 'd', nodePublishSecretRef: { name: 's3' } } },
      ...['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'].map((k, i) => ({ [k]: { secretRef: { name: `r${i}` } } })),
      { projected: { sources: [{ secret: { name: 's4' } }, { configMap: { name: 'c1' } }] } },
      { configMap: { name: 'c2' } },
    ];
    const container = (n: string): Record<string, unknown> => ({
      name: n,
      image: 'i',
      env: [{ name: 'E', valueFrom: { secretKeyRef: { name: `e-${n}`, key: 'k' } } }, { name: 'F', valueFrom: { configMapKeyRef: { name: `f-${n}`, key: 'k' } } }],
      envFrom: [{ secretRef: { name: `g-${n}` } }, { configMapRef: { name: `h-${n}` } }],
    });
    const p = {
      metadata: { name: 'p', namespace: 'a' },
      spec: {
        imagePullSecrets: [{ name: 'pull' }],
        volumes: sources.map((s, i) => ({ name: `v${i}`, ...s })),
        containers: [container('c')],
        initContainers: [container('i')],
        ephemeralContainers: [container('d')],
      },
    } as Pod;
    expect([...podReferences(p, 'secrets')].sort()).toEqual(
      ['e-c', 'e-d', 'e-i', 'g-c', 'g-d', 'g-i', 'pull', 'r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 's1', 's2', 's3', 's4'].sort(),
    );
    expect([...podReferences(p, 'configmaps')].sort()).toEqual(['c1', 'c2', 'f-c', 'f-d', 'f-i', 'h-c', 'h-d', 'h-i'].sort());
  });
});

describe('Node authorizer over the graph', () => {
  const node1: UserInfo = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  const getSecret = (name: string) => ({ user: node1, verb: 'get', apiGroup: '', resource: 'secrets', namespace: 'a', name });

  /** An authorizer whose graph watches an empty trailing store (`watched`): what `store` holds has not reached it. */
  const trailing = async () => {
    const watched = new TrailingStore();
    const graph = new NodeGraph(watched);
    const store = new MemoryStore();
    const { reader, reads } = countedReader(store);
    const authorizer = createNodeAuthorizer({ objects: reader, graph });
    await untilReady(graph);
    return { watched, graph, store, reads, authorizer };
  };

  it('decides from memory alone where the store delivers before it acknowledges: no read for an allow or a deny', async () => {
    const store = new MemoryStore();
    const graph = new NodeGraph(store);
    const { reader, reads } = countedReader(store);
    const authorizer = createNodeAuthorizer({ objects: reader, graph });
    await untilReady(graph);
    expect(graph.current()).toBe(true);
    await store.create(podKey('a', 'p'), pod('a', 'p', 'n1', { secret: 's' }));
    expect((await authorizer.authorize(getSecret('s'))).allowed).toBe(true);
    for (let i = 0; i < 50; i++) expect((await authorizer.authorize(getSecret(`other-${i}`))).allowed).toBe(false);
    await store.update(podKey('a', 'p'), pod('a', 'p', 'n2', { secret: 's' }));
    expect((await authorizer.authorize(getSecret('s'))).allowed).toBe(false);
    expect(reads()).toBe(0);
    graph.stop();
    await store.close();
  });

  it('confirms a deny against the store where the graph may trail it, so a pod bound a moment ago is never refused', async () => {
    const { watched, graph, store, reads, authorizer } = await trailing();
    expect(graph.current()).toBe(false);
    await store.create(podKey('a', 'p'), pod('a', 'p', 'n1', { secret: 's' }));
    expect((await authorizer.authorize(getSecret('s'))).allowed).toBe(true);
    expect((await authorizer.authorize(getSecret('t'))).allowed).toBe(false);
    expect(reads()).toBe(2);
    // What the graph holds is allowed without a read.
    await watched.create(podKey('a', 'q'), pod('a', 'q', 'n1', { secret: 'u' }));
    expect((await authorizer.authorize(getSecret('u'))).allowed).toBe(true);
    expect(reads()).toBe(2);
    graph.stop();
    await Promise.all([watched.close(), store.close()]);
  });

  it('shares one list per namespace among the denies it confirms together, and never lends a read begun before a question', async () => {
    const { watched, graph, store, reads, authorizer } = await trailing();
    await store.create(podKey('b', 'p'), pod('b', 'p', 'n1', { secret: 's' }));
    const asked = Array.from({ length: 50 }, (_, i) => authorizer.authorize({ ...getSecret(i % 5 === 0 ? 's' : `t${i}`), namespace: i % 2 ? 'a' : 'b' }));
    const allowed = (await Promise.all(asked)).map((d, i) => (d.allowed ? i : -1)).filter((i) => i >= 0);
    // Pod b/p names s: the questions for s in b are allowed, those for s in a are not.
    expect([allowed, reads()]).toEqual([[0, 10, 20, 30, 40], 2]);
    const first = authorizer.authorize(getSecret('late'));
    await new Promise((r) => setImmediate(r));
    await store.create(podKey('a', 'q'), pod('a', 'q', 'n1', { secret: 'late' }));
    expect((await authorizer.authorize(getSecret('late'))).allowed).toBe(true);
    await first;
    graph.stop();
    await Promise.all([watched.close(), store.close()]);
  });

  it('reads the store until the graph has listed the pods', async () => {
    const store = new BreakableStore();
    await store.create(podKey('a', 'p'), pod('a', 'p', 'n1', { secret: 's' }));
    store.failRanges = 1;
    const graph = new NodeGraph(store);
    const authorizer = createNodeAuthorizer({ objects: objectReader(store), graph });
    await new Promise((r) => setTimeout(r, 20));
    expect(graph.ready()).toBe(false);
    expect((await authorizer.authorize(getSecret('s'))).allowed).toBe(true);
    expect((await authorizer.authorize(getSecret('t'))).allowed).toBe(false);
    await untilReady(graph);
    expect(graph.related('n1', 'secrets', 'a', 's')).toBe(true);
    graph.stop();
    await store.close();
  });
});
