import { generateKeyPairSync } from 'node:crypto';
import { ApiError } from '../../src/apiserver/http/errors.js';
import { createAccessControl, type AccessControl } from '../../src/apiserver/server/access-control.js';
import { NODES, PODS, SECRETS, SERVICE_ACCOUNTS } from '../../src/apiserver/authentication/resource-infos.js';
import type { KObject } from '../../src/api/meta.js';
import type { Strategy } from '../../src/apiserver/registry/generic/strategy.js';
import { ctxFor, MemoryObjects } from './fixtures.js';
import { compactJson } from '../../src/lib/frozen-json.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const ADMIN = { username: 'admin', groups: ['system:masters'] };
const b64 = (s: string): string => Buffer.from(s).toString('base64');

function bootstrapSecret(id: string, secret: string, data: Record<string, string> = {}): KObject {
  const all: Record<string, string> = { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', ...data };
  return {
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(Object.entries(all).map(([k, v]) => [k, b64(v)])),
  };
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected an ApiError');
}

// Over a reader that only reads with promises, and over one that answers at once (as the store's does).
describe.each([false, true])('TokenRequest, TokenReview and bearer tokens (objects read at once: %s)', (readsAtOnce) => {
  let objects: MemoryObjects;
  let id: AccessControl;
  let now: Date;
  const review = (): Strategy => id.strategies.find((s) => s.info.plural === 'tokenreviews') as Strategy;
  const mint = (body: KObject, name = 'builder'): Promise<KObject> =>
    (id.virtualSubresources.serviceaccounts.token as NonNullable<Strategy['virtual']>).create(
      body,
      ctxFor(ADMIN, objects, id.authorizer, now),
      { namespace: 'default', name },
    );
  const reviewToken = async (token: string, audiences?: string[]): Promise<Record<string, unknown>> => {
    const out = await review().virtual!.create({ spec: { token, audiences } }, ctxFor(ADMIN, objects, id.authorizer, now), {});
    return out.status as Record<string, unknown>;
  };
  const tokenOf = (tr: KObject): string => (tr.status as { token: string }).token;

  beforeEach(async () => {
    now = new Date();
    objects = new MemoryObjects(readsAtOnce);
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-1' } });
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'other', namespace: 'default', uid: 'sa-2' } });
    objects.put(PODS, { metadata: { name: 'web', namespace: 'default', uid: 'pod-1' }, spec: { serviceAccountName: 'builder', nodeName: 'n1' } });
    objects.put(NODES, { metadata: { name: 'n1', uid: 'node-1' } });
    objects.put(SECRETS, bootstrapSecret('abcdef', '0123456789abcdef', { 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token' }));
    id = await createAccessControl({
      objects,
      serviceAccountKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
      issuer: ISSUER,
      tokenFile: 'static-token,alice,uid-a,"dev,ops"\n',
      maxTokenExpirationSeconds: 7200,
      now: () => now,
    });
  });

  it('mints a token with defaults and TokenReview authenticates it', async () => {
    const tr = await mint({ spec: {} });
    expect(tr).toMatchObject({
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name: 'builder', namespace: 'default' },
      spec: { audiences: [ISSUER], expirationSeconds: 3600 },
    });
    const exp = Date.parse((tr.status as { expirationTimestamp: string }).expirationTimestamp);
    expect(Math.round((exp - now.getTime()) / 1000)).toBeGreaterThanOrEqual(3599);
    const status = await reviewToken(tokenOf(tr));
    expect(status).toMatchObject({
      authenticated: true,
      audiences: [ISSUER],
      user: { username: 'system:serviceaccount:default:builder', uid: 'sa-1', groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'] },
    });
  });

  it('refuses expirations under 600 s with 422 on an unnamed TokenRequest', async () => {
    const e = await rejection(mint({ spec: { expirationSeconds: 599 } }));
    expect(e.code).toBe(422);
    expect(e.message).toBe(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
    );
  });

  it('shortens to the maximum with a warning', async () => {
    const ctx = ctxFor(ADMIN, objects, id.authorizer, now);
    const tr = await id.virtualSubresources.serviceaccounts.token!.create({ spec: { expirationSeconds: 86400 } }, ctx, { namespace: 'default', name: 'builder' });
    expect((tr.spec as { expirationSeconds: number }).expirationSeconds).toBe(7200);
    expect(ctx.warnings).toEqual(['requested expiration of 86400 seconds shortened to 7200 seconds']);
  });

  it('checks name, service account and bound objects', async () => {
    expect((await rejection(mint({ metadata: { name: 'x' }, spec: {} }))).message).toBe(
      'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: Invalid value: "x": must match the service account name if specified',
    );
    expect((await rejection(mint({ spec: {} }, 'ghost'))).message).toBe('serviceaccounts "ghost" not found');
    const cm = await rejection(mint({ spec: { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'c' } } }));
    expect([cm.code, cm.message]).toEqual([400, 'cannot bind token to object of type /v1, Kind=ConfigMap']);
    const uid = await rejection(mint({ spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'stale' } } }));
    expect(uid.code).toBe(409);
    expect(uid.message).toBe(
      'Operation cannot be fulfilled on Pod "web": the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated',
    );
    const otherSa = await rejection(mint({ spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } } }, 'other'));
    expect([otherSa.code, otherSa.message]).toEqual([
      400,
      'cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.',
    ]);
    expect((await rejection(mint({ spec: { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'nope' } } }))).code).toBe(404);
  });

  it('binds to a pod (with its node) and stops authenticating when the pod is replaced', async () => {
    const tr = await mint({ spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'pod-1' } } });
    const ok = await reviewToken(tokenOf(tr));
    expect((ok.user as { extra: Record<string, string[]> }).extra).toMatchObject({
      'authentication.kubernetes.io/pod-name': ['web'],
      'authentication.kubernetes.io/node-name': ['n1'],
      'authentication.kubernetes.io/node-uid': ['node-1'],
    });
    objects.remove(PODS, 'default', 'web');
    expect(await reviewToken(tokenOf(tr))).toEqual({ authenticated: false, error: '[invalid bearer token, service account token has been invalidated]' });
    objects.put(PODS, { metadata: { name: 'web', namespace: 'default', uid: 'pod-9' }, spec: { serviceAccountName: 'builder' } });
    expect(await reviewToken(tokenOf(tr))).toEqual({
      authenticated: false,
      error: '[invalid bearer token, pod UID (pod-9) does not match service account pod ref claim (pod-1)]',
    });
  });

  it('refuses a token it verified before as soon as its account or bound Secret is gone or replaced, or it expired', async () => {
    objects.put(SECRETS, { metadata: { name: 'bound', namespace: 'default', uid: 'secret-1' } });
    const token = tokenOf(await mint({ spec: { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'bound', uid: 'secret-1' } } }));
    const refused = async (): Promise<unknown> => (await reviewToken(token)).error;
    for (let i = 0; i < 2; i++) expect((await reviewToken(token)).authenticated).toBe(true);
    objects.remove(SECRETS, 'default', 'bound');
    expect(await refused()).toBe('[invalid bearer token, service account token has been invalidated]');
    objects.put(SECRETS, { metadata: { name: 'bound', namespace: 'default', uid: 'secret-2' } });
    expect(await refused()).toBe('[invalid bearer token, secret UID (secret-2) does not match service account secret ref claim (secret-1)]');
    objects.put(SECRETS, { metadata: { name: 'bound', namespace: 'default', uid: 'secret-1' } });
    expect((await reviewToken(token)).authenticated).toBe(true);
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-9' } });
    expect(await refused()).toBe('[invalid bearer token, service account UID (sa-9) does not match claim (sa-1)]');
    objects.remove(SERVICE_ACCOUNTS, 'default', 'builder');
    expect(await refused()).toBe('[invalid bearer token, serviceaccounts "builder" not found]');
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-1' } });
    expect((await reviewToken(token)).authenticated).toBe(true);
    now = new Date(now.getTime() + 3600_000 + 61_000);
    expect(await refused()).toBe('[invalid bearer token, service account token has expired]');
  });

  it('answers a repeated review with one remembered answer, and refuses its token as soon as upstream would', async () => {
    objects.put(SECRETS, { metadata: { name: 'bound', namespace: 'default', uid: 'secret-1' } });
    objects.put(NODES, { metadata: { name: 'n2', uid: 'node-2' } });
    const bySecret = tokenOf(await mint({ spec: { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'bound', uid: 'secret-1' } } }));
    const byPod = tokenOf(await mint({ spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'pod-1' } } }));
    const byNode = tokenOf(await mint({ spec: { boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: 'n2', uid: 'node-2' } } }));
    const create = (spec: Record<string, unknown>, metadata?: KObject['metadata']): Promise<KObject> =>
      review().virtual!.create({ ...(metadata ? { metadata } : {}), spec }, ctxFor(ADMIN, objects, id.authorizer, now), {});
    const user = {
      username: 'system:serviceaccount:default:builder',
      uid: 'sa-1',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^JTI=/)] },
    };
    const first = await create({ token: bySecret });
    expect(first).toEqual({
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { token: bySecret },
      status: { authenticated: true, user, audiences: [ISSUER] },
    });
    // The same answer, whose JSON the response reuses; the same JSON as an answer built afresh.
    const again = await create({ token: bySecret });
    expect(again).toBe(first);
    expect(compactJson(again)).toBe(JSON.stringify(first));
    const named = await create({ token: bySecret }, { name: 'r' });
    expect(named).not.toBe(first);
    expect(JSON.stringify(named)).toBe(JSON.stringify({ ...first, metadata: { name: 'r', creationTimestamp: null } }));
    // Asked for audiences, it echoes them and answers with the ones the token shares.
    const withAud = await create({ token: bySecret, audiences: ['vault', ISSUER] });
    expect([withAud.spec, (withAud.status as { audiences: string[] }).audiences]).toEqual([{ token: bySecret, audiences: ['vault', ISSUER] }, [ISSUER]]);
    expect(await create({ token: bySecret, audiences: ['vault', ISSUER] })).toBe(withAud);
    const refusal = async (token: string, audiences?: string[]): Promise<unknown> => (await create(audiences ? { token, audiences } : { token })).status;
    expect(await refusal(bySecret, ['vault'])).toEqual({
      authenticated: false,
      error: `[invalid bearer token, token audiences ["${ISSUER}"] is invalid for the target audiences ["vault"]]`,
    });
    const invalidated = { authenticated: false, error: '[invalid bearer token, service account token has been invalidated]' };
    objects.remove(SECRETS, 'default', 'bound');
    expect(await refusal(bySecret)).toEqual(invalidated);
    objects.put(SECRETS, { metadata: { name: 'bound', namespace: 'default', uid: 'secret-1' } });
    expect(JSON.stringify(await create({ token: bySecret }))).toBe(JSON.stringify(first));
    for (const token of [byPod, byNode]) expect((await create({ token })).status).toMatchObject({ authenticated: true });
    objects.remove(PODS, 'default', 'web');
    expect(await refusal(byPod)).toEqual(invalidated);
    objects.remove(NODES, undefined, 'n2');
    expect(await refusal(byNode)).toEqual(invalidated);
    objects.remove(SERVICE_ACCOUNTS, 'default', 'builder');
    expect(await refusal(bySecret)).toEqual({ authenticated: false, error: '[invalid bearer token, serviceaccounts "builder" not found]' });
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-1' } });
    expect(JSON.stringify(await create({ token: bySecret }))).toBe(JSON.stringify(first));
    now = new Date(now.getTime() + 3600_000 + 61_000);
    expect(await refusal(bySecret)).toEqual({ authenticated: false, error: '[invalid bearer token, service account token has expired]' });
  });

  it('does not take a token of another issuer, signed with its key, for one of its own', async () => {
    const other = await createAccessControl({
      objects,
      serviceAccountKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
      issuer: 'https://other.example',
      now: () => now,
    });
    const foreign = await (other.virtualSubresources.serviceaccounts.token as NonNullable<Strategy['virtual']>).create(
      { spec: { audiences: [ISSUER] } },
      ctxFor(ADMIN, objects, other.authorizer, now),
      { namespace: 'default', name: 'builder' },
    );
    for (let i = 0; i < 2; i++) expect(await reviewToken(tokenOf(foreign))).toEqual({ authenticated: false, error: 'invalid bearer token' });
  });

  it('extends pod-bound 3607 s tokens to a year with warnafter', async () => {
    const tr = await mint({ spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } } });
    const claims = JSON.parse(Buffer.from(tokenOf(tr).split('.')[1] ?? '', 'base64url').toString()) as { exp: number; iat: number; 'kubernetes.io': { warnafter: number } };
    expect(claims.exp - claims.iat).toBe(31536000);
    expect(claims['kubernetes.io'].warnafter - claims.iat).toBe(3607);
  });

  it('TokenReview rejects a namespace and an empty token with 400', async () => {
    const ctx = ctxFor(ADMIN, objects, id.authorizer, now);
    expect((await rejection(review().virtual!.create({ spec: { token: 'x' } }, ctx, { namespace: 'ns' }))).message).toBe(
      'namespace is not allowed on this type: ns',
    );
    expect((await rejection(review().virtual!.create({ spec: {} }, ctx, {}))).message).toBe('token is required for TokenReview in authentication');
  });

  it('authenticates static and bootstrap tokens only for the API audiences', async () => {
    expect(await reviewToken('static-token')).toMatchObject({
      authenticated: true,
      user: { username: 'alice', uid: 'uid-a', groups: ['dev', 'ops', 'system:authenticated'] },
    });
    expect(await reviewToken('static-token', ['vault'])).toEqual({ authenticated: false, error: 'invalid bearer token' });
    expect(await reviewToken('abcdef.0123456789abcdef')).toMatchObject({
      authenticated: true,
      user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'] },
    });
  });

  it('refuses bootstrap tokens with a wrong secret, expired, or not for authentication', async () => {
    expect((await reviewToken('abcdef.0123456789abcdee')).authenticated).toBe(false);
    objects.put(SECRETS, bootstrapSecret('abcdef', '0123456789abcdef', { expiration: new Date(now.getTime() - 1000).toISOString() }));
    expect((await reviewToken('abcdef.0123456789abcdef')).authenticated).toBe(false);
    objects.put(SECRETS, bootstrapSecret('abcdef', '0123456789abcdef', { 'usage-bootstrap-authentication': 'false' }));
    expect((await reviewToken('abcdef.0123456789abcdef')).authenticated).toBe(false);
  });

  it('request authentication: bearer → user + system:authenticated; bad bearer → 401; none → undefined', async () => {
    const tr = await mint({ spec: {} });
    const user = await id.authenticator.authenticate({ headers: { authorization: `Bearer ${tokenOf(tr)}` }, clientCertificateChain: [] });
    expect(user?.username).toBe('system:serviceaccount:default:builder');
    expect(user?.groups).toContain('system:authenticated');
    const bad = await rejection(id.authenticator.authenticate({ headers: { authorization: 'Bearer nope' }, clientCertificateChain: [] }));
    expect([bad.code, bad.message]).toEqual([401, 'Unauthorized']);
    expect(await id.authenticator.authenticate({ headers: {}, clientCertificateChain: [] })).toBeUndefined();
  });

  it('serves OIDC discovery documents whose JWKS verifies the minted tokens', async () => {
    const [config, jwks] = id.oidcRoutes;
    expect(JSON.parse(config!.body)).toEqual({
      issuer: ISSUER,
      jwks_uri: 'https://kubernetes.default.svc.cluster.local/openid/v1/jwks',
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
    });
    const { createLocalJWKSet, jwtVerify } = await import('jose');
    const set = createLocalJWKSet(JSON.parse(jwks!.body) as { keys: [] });
    const token = tokenOf(await mint({ spec: {} }));
    await expect(jwtVerify(token, set, { issuer: ISSUER, audience: ISSUER })).resolves.toBeDefined();
  });
});
