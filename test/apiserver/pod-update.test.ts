/**
 * A pod's spec is immutable but for what upstream's ValidatePodUpdate names: a namespace user who may
 * update pods cannot move one to another node, nor make it name another Secret (which its node could
 * then read), by PUT, merge or strategic patch, or kubectl; images, tolerations added,
 * activeDeadlineSeconds set or lowered, and scheduling gates removed still go through.
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, type KubectlResult } from '../kubectl/kubectl.js';

const NS = '/api/v1/namespaces/default';
const RBAC = '/apis/rbac.authorization.k8s.io/v1/namespaces/default';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const FORBIDDEN_SPEC =
  'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,' +
  '`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

let srv: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;
const alice = (method: string, path: string, body?: unknown, contentType?: string): Promise<RawResponse> =>
  raw(srv, method, path, { token: 'alice-token', body, contentType });
const admin = async (method: string, path: string, body?: unknown): Promise<RawResponse> => {
  const r = await raw(srv, method, path, { body });
  if (r.status >= 300) throw new Error(`setup failed: ${r.status} ${r.text}`);
  return r;
};

beforeAll(async () => {
  srv = await startTestServer({ tokenFile: 'alice-token,alice,uid-alice,"system:authenticated"\n' });
  kubectl = kubectlFor(srv);
  await admin('POST', `${RBAC}/roles`, { metadata: { name: 'pods' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'update', 'patch'] }] });
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pods' };
  await admin('POST', `${RBAC}/rolebindings`, { metadata: { name: 'alice' }, roleRef, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }] });
  await admin('POST', `${NS}/pods`, {
    metadata: { name: 'p' },
    spec: {
      nodeName: 'node-a',
      // A merge patch of the containers replaces them whole: no token volume mount to lose.
      automountServiceAccountToken: false,
      containers: [{ name: 'c', image: 'app:1' }],
      volumes: [{ name: 's', secret: { secretName: 'mine' } }],
      tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }],
      schedulingGates: [],
    },
  });
}, 60_000);
afterAll(async () => srv?.close());

/** The 422 and its one cause, as kubectl and client libraries read them. */
function expectInvalid(r: RawResponse, field: string, message: string): void {
  expect([r.status, r.json.reason, r.json.details?.kind, r.json.details?.name]).toEqual([422, 'Invalid', 'Pod', 'p']);
  expect(r.json.message).toContain(`Pod "p" is invalid: ${message}`);
  expect(r.json.details.causes.map((c: { field: string }) => c.field)).toEqual([field]);
}

it('refuses to move a pod to another node, by PUT, merge patch or strategic merge patch, naming the field that differs', async () => {
  const current = (await admin('GET', `${NS}/pods/p`)).json;
  const moved = await alice('PUT', `${NS}/pods/p`, { ...current, spec: { ...current.spec, nodeName: 'node-b' } });
  expectInvalid(moved, 'spec', FORBIDDEN_SPEC);
  expect(moved.json.message).toContain('spec.nodeName: "node-a" -> "node-b"');
  expectInvalid(await alice('PATCH', `${NS}/pods/p`, { spec: { nodeName: 'node-b' } }, MERGE), 'spec', FORBIDDEN_SPEC);
  expectInvalid(await alice('PATCH', `${NS}/pods/p`, { spec: { nodeName: null } }, STRATEGIC), 'spec', FORBIDDEN_SPEC);
  expect((await admin('GET', `${NS}/pods/p`)).json.spec.nodeName).toBe('node-a');
});

it('refuses a spec naming another Secret, other containers, a modified toleration, a raised deadline, a new gate', async () => {
  const volumes = [{ name: 's', secret: { secretName: 'theirs' } }];
  expectInvalid(await alice('PATCH', `${NS}/pods/p`, { spec: { volumes } }, MERGE), 'spec', FORBIDDEN_SPEC);
  const containers = [{ name: 'c', image: 'app:1' }, { name: 'd', image: 'app:1' }];
  expectInvalid(await alice('PATCH', `${NS}/pods/p`, { spec: { containers } }, MERGE), 'spec.containers', 'spec.containers: Forbidden: pod updates may not add or remove containers');
  const tolerations = [{ key: 'other', operator: 'Exists', effect: 'NoExecute' }];
  expectInvalid(await alice('PATCH', `${NS}/pods/p`, { spec: { tolerations } }, MERGE), 'spec.tolerations', 'spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds');
  expect((await alice('PATCH', `${NS}/pods/p`, { spec: { activeDeadlineSeconds: 60 } }, MERGE)).status).toBe(200);
  expectInvalid(
    await alice('PATCH', `${NS}/pods/p`, { spec: { activeDeadlineSeconds: 120 } }, MERGE),
    'spec.activeDeadlineSeconds',
    'spec.activeDeadlineSeconds: Invalid value: 120: must be less than or equal to previous value',
  );
  expectInvalid(
    await alice('PATCH', `${NS}/pods/p`, { spec: { schedulingGates: [{ name: 'g' }] } }, MERGE),
    'spec.schedulingGates[0].name',
    "spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'g'",
  );
  expectInvalid(
    await alice('PATCH', `${NS}/pods/p`, { metadata: { annotations: { 'kubernetes.io/config.mirror': 'x' } } }, MERGE),
    'metadata.annotations[kubernetes.io/config.mirror]',
    'metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not add mirror pod annotation',
  );
});

it('lets an update change images, add tolerations, change tolerationSeconds and lower the deadline', async () => {
  const r = await alice(
    'PATCH',
    `${NS}/pods/p`,
    {
      spec: {
        containers: [{ name: 'c', image: 'app:2' }],
        tolerations: [
          { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 20 },
          { key: 'more', operator: 'Exists' },
        ],
        activeDeadlineSeconds: 30,
      },
      metadata: { labels: { a: 'b' } },
    },
    MERGE,
  );
  expect(r.status).toBe(200);
  // DefaultTolerationSeconds adds its two back after the patch's own.
  expect([r.json.spec.containers[0].image, r.json.spec.tolerations.length, r.json.spec.activeDeadlineSeconds, r.json.spec.nodeName]).toEqual(['app:2', 4, 30, 'node-a']);
});

it('kubectl patch of spec.nodeName prints the Invalid error, as against kube-apiserver', async () => {
  const out = await kubectl('--as', 'alice', 'patch', 'pod', 'p', '-p', '{"spec":{"nodeName":"node-b"}}');
  expect(out.code).toBe(1);
  expect(out.stderr).toContain(`The Pod "p" is invalid: ${FORBIDDEN_SPEC}`);
});

it("takes a non-pointer field's zero value for its absence, as Go's types do, but not a pointer's", async () => {
  const current = (await admin('GET', `${NS}/pods/p`)).json;
  expect(current.spec.hostNetwork).toBeUndefined();
  const [container, ...others] = current.spec.containers;
  const [toleration, ...more] = current.spec.tolerations;
  const zeros = await alice('PUT', `${NS}/pods/p`, {
    ...current,
    spec: {
      ...current.spec,
      hostNetwork: false,
      hostPID: false,
      subdomain: '',
      containers: [{ ...container, stdin: false, tty: false, workingDir: '' }, ...others],
      tolerations: [{ ...toleration, value: '' }, ...more],
    },
  });
  expect(zeros.status).toBe(200);

  const pointer = await alice('PATCH', `${NS}/pods/p`, { spec: { shareProcessNamespace: false } }, MERGE);
  expectInvalid(pointer, 'spec', FORBIDDEN_SPEC);
  expect(pointer.json.message).toContain('spec.shareProcessNamespace: <none> -> false');
  const set = await alice('PATCH', `${NS}/pods/p`, { spec: { hostNetwork: true } }, MERGE);
  expectInvalid(set, 'spec', FORBIDDEN_SPEC);
  expect(set.json.message).toContain('spec.hostNetwork: false -> true');
});

it('lets a gated pod gain node selector labels and node affinity requirements, and lose or change none', async () => {
  const TERMS = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms';
  const zone = { key: 'zone', operator: 'In', values: ['a'] };
  const disk = { key: 'disk', operator: 'Exists' };
  const affinity = (...terms: unknown[][]) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })) } } });
  await admin('POST', `${NS}/pods`, {
    metadata: { name: 'g' },
    spec: { containers: [{ name: 'c', image: 'app:1' }], schedulingGates: [{ name: 'example.com/quota' }], nodeSelector: { tier: 'web' }, affinity: affinity([zone]) },
  });
  const patch = (spec: unknown) => alice('PATCH', `${NS}/pods/g`, { spec }, MERGE);
  const expectGatedInvalid = (r: RawResponse, field: string, message: string): void => {
    expect([r.status, r.json.reason]).toEqual([422, 'Invalid']);
    expect(r.json.details.causes.map((c: { field: string }) => c.field)).toEqual([field]);
    expect(r.json.message).toContain(message);
  };

  const added = await patch({ nodeSelector: { pool: 'blue' }, affinity: affinity([zone, disk]) });
  expect(added.status).toBe(200);
  expect([added.json.spec.nodeSelector, added.json.spec.affinity]).toEqual([{ tier: 'web', pool: 'blue' }, affinity([zone, disk])]);

  expectGatedInvalid(await patch({ nodeSelector: { tier: 'db' } }), 'spec.nodeSelector', 'only additions to spec.nodeSelector are allowed (no mutations or deletions)');
  expectGatedInvalid(await patch({ nodeSelector: { pool: null } }), 'spec.nodeSelector', 'only additions to spec.nodeSelector are allowed (no mutations or deletions)');
  expectGatedInvalid(await patch({ affinity: affinity([disk, zone]) }), `${TERMS}[0]`, 'only additions are allowed (no mutations or deletions)');
  expectGatedInvalid(await patch({ affinity: affinity([zone, disk], [disk]) }), TERMS, 'no additions/deletions to non-empty NodeSelectorTerms list are allowed');
  // Other placement stays immutable, and once ungated so does the node selector.
  expectInvalid(await alice('PATCH', `${NS}/pods/p`, { spec: { nodeSelector: { pool: 'blue' } } }, MERGE), 'spec', FORBIDDEN_SPEC);
  expect((await patch({ schedulingGates: [] })).status).toBe(200);
  const ungated = await patch({ nodeSelector: { more: 'x' } });
  expect([ungated.status, ungated.json.details.causes[0].field]).toEqual([422, 'spec']);
});
