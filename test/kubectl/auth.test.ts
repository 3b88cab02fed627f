/**
 * Access control as kubectl users meet it: `auth whoami`, `auth can-i` (SelfSubjectAccessReview,
 * sent as protobuf), impersonation with `--as`/`--as-group`, RBAC grants taking effect, bootstrap
 * tokens limited to the node-bootstrapper role, and bound service-account tokens.
 */
import { AuthenticationV1Api, AuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startTestServer, tokenKubeConfig, type TestServer } from '../helpers/server.js';
import { kubectlFor, manifest, type KubectlResult } from './kubectl.js';

let srv: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;

beforeAll(async () => {
  srv = await startTestServer();
  kubectl = kubectlFor(srv);
});
afterAll(() => srv.close());

const withToken = (token: string) => tokenKubeConfig(srv, token);

it('auth whoami names the admin client certificate', async () => {
  const r = await kubectl('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}');
  expect([r.code, r.stderr]).toEqual([0, '']);
  expect(r.stdout).toBe('kubernetes-admin ["system:masters","system:authenticated"]');
});

it('auth can-i answers from RBAC, and a RoleBinding grants what it names', async () => {
  expect((await kubectl('auth', 'can-i', 'delete', 'csr')).stdout.trim()).toBe('yes');
  const before = await kubectl('auth', 'can-i', 'list', 'serviceaccounts', '-n', 'team', '--as', 'jane');
  expect([before.code, before.stdout.trim()]).toEqual([1, 'no']);
  const denied = await kubectl('get', 'serviceaccounts', '-n', 'default', '--as', 'jane');
  expect(denied.stderr.trim()).toBe(
    'Error from server (Forbidden): serviceaccounts is forbidden: User "jane" cannot list resource "serviceaccounts" in API group "" in the namespace "default"',
  );

  expect((await kubectl('create', 'role', 'sa-reader', '-n', 'default', '--verb=get,list', '--resource=serviceaccounts')).code).toBe(0);
  expect((await kubectl('create', 'rolebinding', 'jane-reads', '-n', 'default', '--role=sa-reader', '--user=jane')).code).toBe(0);
  expect((await kubectl('auth', 'can-i', 'list', 'serviceaccounts', '-n', 'default', '--as', 'jane')).stdout.trim()).toBe('yes');
  expect((await kubectl('auth', 'can-i', 'delete', 'serviceaccounts', '-n', 'default', '--as', 'jane')).stdout.trim()).toBe('no');
  const allowed = await kubectl('get', 'serviceaccounts', '-n', 'default', '--as', 'jane', '-o', 'name');
  expect(allowed.stdout).toContain('serviceaccount/default');
});

it('auth can-i --list lists what RBAC grants in the namespace (SelfSubjectRulesReview), and says when a node\'s list is incomplete', async () => {
  const admin = await kubectl('auth', 'can-i', '--list');
  expect([admin.code, admin.stderr]).toEqual([0, '']);
  const adminLines = admin.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
  expect(adminLines[0]).toEqual(['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']);
  expect(adminLines).toContainEqual(['*.*', '[]', '[]', '[*]']);
  expect(adminLines).toContainEqual(['[*]', '[]', '[*]']);

  // jane holds the Role granted in the test above, and what every authenticated user may do.
  const jane = await kubectl('auth', 'can-i', '--list', '-n', 'default', '--as', 'jane');
  expect([jane.code, jane.stderr]).toEqual([0, '']);
  const janeLines = jane.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
  expect(janeLines).toContainEqual(['serviceaccounts', '[]', '[]', '[get list]']);
  expect(janeLines).toContainEqual(['selfsubjectrulesreviews.authorization.k8s.io', '[]', '[]', '[create]']);
  expect(janeLines).toContainEqual(['[/healthz]', '[]', '[get]']);
  expect(jane.stdout).not.toContain('*.*');
  // Elsewhere her Role does not apply.
  const elsewhere = await kubectl('auth', 'can-i', '--list', '-n', 'kube-system', '--as', 'jane');
  expect(elsewhere.stdout).not.toContain('serviceaccounts ');

  // The Node authorizer cannot enumerate a node's permissions: upstream marks the list incomplete.
  const review = await srv.kubeConfig.makeApiClient(AuthorizationV1Api).createSelfSubjectRulesReview({
    body: { spec: { namespace: 'default' } },
  });
  expect(review.status).toMatchObject({ incomplete: false });
  const node = await kubectl('auth', 'can-i', '--list', '--as', 'system:node:n1', '--as-group', 'system:nodes');
  expect(node.code).toBe(0);
  expect(node.stderr).toContain('node authorizer does not support user rule resolution');
});

it('a binding to a missing role is the rules review\'s evaluationError, the other rules still listed', async () => {
  expect((await kubectl('create', 'rolebinding', 'ghost-reads', '-n', 'default', '--role=no-such-role', '--user=ghost')).code).toBe(0);
  const file = manifest(srv, 'rules.yaml', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } });
  const r = await kubectl('create', '-f', file, '--as', 'ghost', '-o', 'json');
  expect([r.code, r.stderr]).toEqual([0, '']);
  const status = (JSON.parse(r.stdout) as { status: { incomplete: boolean; evaluationError: string; resourceRules: { resources?: string[] }[] } }).status;
  expect(status.incomplete).toBe(false);
  expect(status.evaluationError).toBe('roles.rbac.authorization.k8s.io "no-such-role" not found');
  expect(status.resourceRules.some((rule) => rule.resources?.includes('selfsubjectrulesreviews'))).toBe(true);
});

it('a SelfSubjectRulesReview without a namespace is a 400', async () => {
  const err = await srv.kubeConfig
    .makeApiClient(AuthorizationV1Api)
    .createSelfSubjectRulesReview({ body: { spec: {} } })
    .catch((e: unknown) => e as { code: number; body: string });
  expect(err).toMatchObject({ code: 400 });
  expect(JSON.parse((err as { body: string }).body)).toMatchObject({ reason: 'BadRequest', message: 'no namespace on request' });
});

it('impersonates groups with --as-group, and whoami reports the impersonated user', async () => {
  const r = await kubectl('auth', 'whoami', '--as', 'bob', '--as-group', 'system:masters', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}');
  expect(r.stdout).toBe('bob ["system:masters","system:authenticated"]');
  // Each --as-group is its own Impersonate-Group header, and each its own group.
  const two = await kubectl('auth', 'whoami', '--as', 'bob', '--as-group', 'system:masters', '--as-group', 'devs', '-o', 'jsonpath={.status.userInfo.groups}');
  expect(two.stdout).toBe('["system:masters","devs","system:authenticated"]');
});

it("a kubeadm node-join bootstrap token may create and read CSRs but not delete them or read ServiceAccounts; other bootstrap tokens may not", async () => {
  const core = srv.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespacedSecret({
    namespace: 'kube-system',
    body: {
      metadata: { name: 'bootstrap-token-abcdef' },
      type: 'bootstrap.kubernetes.io/token',
      stringData: {
        'token-id': 'abcdef',
        'token-secret': '0123456789abcdef',
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
      },
    },
  });
  const who = await withToken('abcdef.0123456789abcdef')
    .makeApiClient(AuthenticationV1Api)
    .createSelfSubjectReview({ body: {} });
  expect(who.status?.userInfo?.username).toBe('system:bootstrap:abcdef');
  expect(who.status?.userInfo?.groups).toEqual(['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated']);

  const other = ['--as', 'system:bootstrap:ghijkl', '--as-group', 'system:bootstrappers'];
  expect((await kubectl('auth', 'can-i', 'create', 'certificatesigningrequests', ...other)).stdout.trim()).toBe('no');
  const canCreate = await withToken('abcdef.0123456789abcdef')
    .makeApiClient(AuthorizationV1Api)
    .createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: 'create', group: 'certificates.k8s.io', resource: 'certificatesigningrequests' } } } });
  expect(canCreate.status?.allowed).toBe(true);
  // The groups a kubeadm join token authenticates with.
  const as = ['--as', 'system:bootstrap:abcdef', '--as-group', 'system:bootstrappers', '--as-group', 'system:bootstrappers:kubeadm:default-node-token'];
  expect((await kubectl('auth', 'can-i', 'create', 'certificatesigningrequests', ...as)).stdout.trim()).toBe('yes');
  expect((await kubectl('auth', 'can-i', 'get', 'certificatesigningrequests', ...as)).stdout.trim()).toBe('yes');
  expect((await kubectl('auth', 'can-i', 'delete', 'certificatesigningrequests', ...as)).stdout.trim()).toBe('no');
  expect((await kubectl('auth', 'can-i', 'get', 'serviceaccounts', '-n', 'kube-system', ...as)).stdout.trim()).toBe('no');

  const wrong = withToken('abcdef.ffffffffffffffff').makeApiClient(AuthenticationV1Api);
  await expect(wrong.createSelfSubjectReview({ body: {} })).rejects.toMatchObject({ code: 401 });
});

it('a pod-bound token from kubectl create token authenticates until the pod is deleted', async () => {
  expect((await kubectl('create', 'serviceaccount', 'runner')).code).toBe(0);
  const core = srv.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'job-1' }, spec: { serviceAccountName: 'runner', containers: [{ name: 'c', image: 'busybox' }] } },
  });
  const minted = await kubectl('create', 'token', 'runner', '--bound-object-kind', 'Pod', '--bound-object-name', 'job-1');
  expect([minted.code, minted.stderr]).toEqual([0, '']);
  const token = minted.stdout.trim();

  const reviews = srv.kubeConfig.makeApiClient(AuthenticationV1Api);
  const review = await reviews.createTokenReview({ body: { spec: { token } } });
  expect(review.status?.authenticated).toBe(true);
  expect(review.status?.user?.username).toBe('system:serviceaccount:default:runner');
  expect(review.status?.user?.extra?.['authentication.kubernetes.io/pod-name']).toEqual(['job-1']);

  await core.deleteNamespacedPod({ namespace: 'default', name: 'job-1' });
  const after = await reviews.createTokenReview({ body: { spec: { token } } });
  expect(after.status?.authenticated).toBeFalsy();
  await expect(withToken(token).makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} })).rejects.toMatchObject({ code: 401 });
});

it('kubectl create -f works for create-only kinds with default validation (TokenReview)', async () => {
  const token = (await kubectl('create', 'token', 'default')).stdout.trim();
  const file = manifest(srv, 'tokenreview.yaml', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
  const r = await kubectl('create', '-f', file, '-o', 'jsonpath={.status.authenticated} {.status.user.username}');
  expect([r.code, r.stderr, r.stdout]).toEqual([0, '', 'true system:serviceaccount:default:default']);
});
