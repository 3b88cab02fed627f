/**
 * What upstream's default-on mutating admission plugins add to a new pod, as `kubectl get pod -o
 * yaml` shows it: ServiceAccount's projected token volume (mounted read-only in every init and app
 * container) and the account's image pull secrets, DefaultTolerationSeconds' two 300 s NoExecute
 * tolerations, and Priority's priority and preemption policy. The field manager records managedFields
 * before admission runs, so the creator owns none of it.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const VOLUME_NAME = /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/;
const PODS = '/api/v1/namespaces/default/pods';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const create = async (name: string, spec: Json, metadata: Json = {}): Promise<Json> => {
  const res = await raw(s, 'POST', PODS, { body: { metadata: { name, ...metadata }, spec } });
  expect(res.status).toBe(201);
  return res.json as Json;
};
const app = (name: string, extra: Json = {}): Json => ({ name, image: 'busybox', ...extra });
const tokenMounts = (c: Json): Json[] => (c.volumeMounts ?? []).filter((m: Json) => m.mountPath === MOUNT_PATH);

describe('ServiceAccount admission', () => {
  it('adds the token volume, mounted read-only in every init and app container, owned by no manager', async () => {
    const pod = await create('sa-volume', { initContainers: [app('init')], containers: [app('a'), app('b')] });
    const volumes = pod.spec.volumes as Json[];
    expect(volumes).toHaveLength(1);
    expect(volumes[0]!.name).toMatch(VOLUME_NAME);
    expect(volumes[0]!.projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    for (const c of [...pod.spec.initContainers, ...pod.spec.containers]) {
      expect(c.volumeMounts).toEqual([{ name: volumes[0]!.name, readOnly: true, mountPath: MOUNT_PATH }]);
    }
    const owned = JSON.stringify(pod.metadata.managedFields);
    for (const field of ['f:volumes', 'f:volumeMounts', 'f:tolerations', 'f:priority', 'f:preemptionPolicy']) expect(owned).not.toContain(field);
    expect(owned).toContain('f:containers');
  });

  it('mounts nothing when the pod or else its ServiceAccount turns automounting off', async () => {
    const sa = { metadata: { name: 'no-automount' }, automountServiceAccountToken: false };
    expect((await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: sa })).status).toBe(201);
    const off = await create('sa-pod-off', { automountServiceAccountToken: false, containers: [app('a')] });
    const accountOff = await create('sa-account-off', { serviceAccountName: 'no-automount', containers: [app('a')] });
    const podWins = await create('sa-pod-wins', { serviceAccountName: 'no-automount', automountServiceAccountToken: true, containers: [app('a')] });
    expect([off.spec.volumes, accountOff.spec.volumes, podWins.spec.volumes?.length]).toEqual([undefined, undefined, 1]);
  });

  it('leaves a container that mounts the path itself, and adds no volume when none needs it', async () => {
    const own = { volumeMounts: [{ name: 'mine', mountPath: MOUNT_PATH }] };
    const volumes = [{ name: 'mine', emptyDir: {} }];
    const one = await create('sa-own-mount', { volumes, containers: [app('a', own), app('b')] });
    expect(tokenMounts(one.spec.containers[0])).toEqual([{ name: 'mine', mountPath: MOUNT_PATH }]);
    expect(tokenMounts(one.spec.containers[1])[0]?.name).toMatch(VOLUME_NAME);
    const all = await create('sa-all-own', { volumes, containers: [app('a', own)] });
    expect(all.spec.volumes.map((v: Json) => v.name)).toEqual(['mine']);
  });

  it("copies the account's image pull secrets to a pod that names none", async () => {
    const sa = { metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'registry-a' }, { name: 'registry-b' }] };
    expect((await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: sa })).status).toBe(201);
    const copied = await create('sa-pull', { serviceAccountName: 'puller', containers: [app('a')] });
    const own = await create('sa-pull-own', { serviceAccountName: 'puller', imagePullSecrets: [{ name: 'mine' }], containers: [app('a')] });
    expect([copied.spec.imagePullSecrets, own.spec.imagePullSecrets]).toEqual([[{ name: 'registry-a' }, { name: 'registry-b' }], [{ name: 'mine' }]]);
  });

  it('leaves a mirror pod without a volume, while the other plugins still default it', async () => {
    const pod = await create('sa-mirror', { containers: [app('a')] }, { annotations: { 'kubernetes.io/config.mirror': 'x' } });
    expect([pod.spec.volumes, pod.spec.containers[0].volumeMounts, pod.spec.serviceAccountName]).toEqual([undefined, undefined, undefined]);
    expect([pod.spec.priority, pod.spec.tolerations?.length]).toEqual([0, 2]);
  });
});

describe('DefaultTolerationSeconds admission', () => {
  const notReady = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
  const unreachable = { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };

  it.each([
    ['none', undefined, [notReady, unreachable]],
    ['its own not-ready one', [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }], [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }, unreachable]],
    ['every taint', [{ operator: 'Exists' }], [{ operator: 'Exists' }]],
    ['every NoSchedule taint', [{ operator: 'Exists', effect: 'NoSchedule' }], [{ operator: 'Exists', effect: 'NoSchedule' }, notReady, unreachable]],
  ])('tolerating %s', async (name, tolerations, want) => {
    const pod = await create(`tol-${name.replace(/[^a-z]+/g, '-')}`, { tolerations, containers: [app('a')] });
    expect(pod.spec.tolerations).toEqual(want);
  });
});

describe('Priority admission', () => {
  it.each([
    ['no class', undefined, 0],
    ['system-node-critical', 'system-node-critical', 2000001000],
    ['system-cluster-critical', 'system-cluster-critical', 2000000000],
  ])('%s', async (_name, priorityClassName, priority) => {
    const pod = await create(`prio-${priorityClassName ?? 'none'}`, { priorityClassName, containers: [app('a')] });
    expect([pod.spec.priority, pod.spec.preemptionPolicy]).toEqual([priority, 'PreemptLowerPriority']);
  });

  it.each([
    ['an unknown class', { priorityClassName: 'high' }, 'no PriorityClass with name high was found'],
    [
      'a priority of its own',
      { priority: 5 },
      'the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
    ],
    [
      'another preemption policy',
      { preemptionPolicy: 'Never' },
      'the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name',
    ],
  ])('refuses %s', async (_name, spec, message) => {
    const res = await raw(s, 'POST', PODS, { body: { metadata: { name: 'prio-refused' }, spec: { ...spec, containers: [app('a')] } } });
    expect([res.status, res.json.reason, res.json.message]).toEqual([403, 'Forbidden', `pods "prio-refused" is forbidden: ${message}`]);
  });

  it('keeps the priority and tolerations through a PUT that leaves them out', async () => {
    const pod = await create('prio-put', { automountServiceAccountToken: false, containers: [app('a')] });
    const { priority, preemptionPolicy, tolerations, ...rest } = pod.spec;
    const res = await raw(s, 'PUT', `${PODS}/prio-put`, { body: { ...pod, metadata: { ...pod.metadata, labels: { a: 'b' } }, spec: rest } });
    expect(res.status).toBe(200);
    expect([res.json.spec.priority, res.json.spec.preemptionPolicy, res.json.spec.tolerations]).toEqual([priority, preemptionPolicy, tolerations]);
  });
});
