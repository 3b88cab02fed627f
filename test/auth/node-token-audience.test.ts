/**
 * A node minting its pods' ServiceAccount tokens for audiences they never use, through the real
 * server: NodeRestriction (upstream's ServiceAccountNodeAudienceRestriction, on since 1.33) lets a
 * node ask for one audience at most, and only one a projected token volume of the bound pod names
 * (none asked: the API's), unless RBAC grants it `request-serviceaccounts-token-audience` on that
 * audience for that ServiceAccount. Anyone else asks as before.
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubeletClientCert } from '../helpers/kubelet-cert.js';

const NS = '/api/v1/namespaces/default';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
let server: TestServer;
let nodeA: { certPem: string; keyPem: string };

const admin = (method: string, p: string, body?: unknown): Promise<RawResponse> => raw(server, method, p, { body });
const ok = async (p: Promise<RawResponse>): Promise<RawResponse> => {
  const r = await p;
  if (r.status >= 300) throw new Error(`setup failed: ${r.status} ${r.text}`);
  return r;
};

/** `who` asks for account app's token bound to `pod`, for `audiences`: [status, message]. */
async function token(pod: string, audiences: string[], client?: { certPem: string; keyPem: string }): Promise<[number, unknown]> {
  const uid = String((await admin('GET', `${NS}/pods/${pod}`)).json?.metadata?.uid);
  const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod, uid } } };
  const res = await raw(server, 'POST', `${NS}/serviceaccounts/app/token`, { client, body });
  return [res.status, res.status === 201 ? 'issued' : res.json?.message];
}

const refused = (audience: string): [number, string] => [
  403,
  `serviceaccounts "app" is forbidden: audience "${audience}" not found in pod spec volume, system:node:node-a is not authorized to request tokens for this audience`,
];

beforeAll(async () => {
  server = await startTestServer();
  nodeA = await kubeletClientCert(server, 'node-a');
  await ok(raw(server, 'POST', '/api/v1/nodes', { client: nodeA, body: { metadata: { name: 'node-a' } } }));
  await ok(admin('POST', `${NS}/serviceaccounts`, { metadata: { name: 'app' } }));
  const tokenVolume = (audience?: string): unknown => ({ serviceAccountToken: { path: audience ?? 'api', ...(audience ? { audience } : {}) } });
  const pod = (name: string, sources: unknown[]): unknown => ({
    metadata: { name },
    // No admission-added token volume either: `no-token` projects no token at all.
    spec: { nodeName: 'node-a', serviceAccountName: 'app', automountServiceAccountToken: false, volumes: sources.length ? [{ name: 't', projected: { sources } }] : [], containers: [{ name: 'c', image: 'x' }] },
  });
  await ok(admin('POST', `${NS}/pods`, pod('vault-app', [tokenVolume(), tokenVolume('vault')])));
  await ok(admin('POST', `${NS}/pods`, pod('no-token', [])));
}, 60_000);
afterAll(async () => server?.close());

it('lets a node ask for the audiences its pod\'s volumes name, the API\'s when none is asked', async () => {
  expect(await token('vault-app', ['vault'], nodeA)).toEqual([201, 'issued']);
  expect(await token('vault-app', [], nodeA)).toEqual([201, 'issued']);
});

it('refuses an audience the pod never names, two audiences, and the API\'s for a pod with no token volume', async () => {
  expect(await token('vault-app', ['sts.amazonaws.com'], nodeA)).toEqual(refused('sts.amazonaws.com'));
  expect(await token('vault-app', ['vault', 'sts.amazonaws.com'], nodeA)).toEqual([403, 'serviceaccounts "app" is forbidden: node may only request 0 or 1 audiences']);
  expect(await token('no-token', [], nodeA)).toEqual(refused(''));
});

it('lets RBAC grant a node an audience for one ServiceAccount, by request-serviceaccounts-token-audience', async () => {
  await ok(
    admin('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'sts-audience' },
      rules: [{ apiGroups: [''], resources: ['sts.amazonaws.com'], verbs: ['request-serviceaccounts-token-audience'], resourceNames: ['app'] }],
    }),
  );
  await ok(
    admin('POST', `${RBAC}/namespaces/default/rolebindings`, {
      metadata: { name: 'node-a-sts' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'sts-audience' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:node:node-a' }],
    }),
  );
  expect(await token('vault-app', ['sts.amazonaws.com'], nodeA)).toEqual([201, 'issued']);
  expect(await token('vault-app', ['other.example'], nodeA)).toEqual(refused('other.example'));
});

it('leaves a non-node (the admin) free to ask for any audience', async () => {
  expect(await token('no-token', ['anything.example'])).toEqual([201, 'issued']);
});
