/** Access control behind the real HTTPS server: certificates, tokens, RBAC and reviews over the wire. */
import { generateKeyPairSync } from 'node:crypto';
import { createAccessControl } from '../../src/apiserver/server/access-control.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES } from '../../src/apiserver/authentication/resource-infos.js';
import { buildRegistries } from '../../src/apiserver/registry/registries.js';
import { startApiServer, type RunningApiServer } from '../../src/apiserver/server/server.js';
import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import { storageKey } from '../../src/apiserver/storage/store.js';
import { silentLogger } from '../../src/log/logger.js';
import { raw, type RawResponse } from '../helpers/http.js';
import { createCa, issueLeafPem, type TestCa } from './fixtures.js';

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

describe('identity over HTTPS', () => {
  let server: RunningApiServer;
  let ca: TestCa;
  let admin: { certPem: string; keyPem: string };
  let nobody: { certPem: string; keyPem: string };

  const call = async (method: string, path: string, o: { client?: { certPem: string; keyPem: string }; token?: string; body?: unknown } = {}): Promise<Reply> => {
    const res = await raw({ url: server.url, caPem: ca.pem, admin: { token: '' } }, method, path, { ...o, anonymous: !o.token && !o.client });
    return { status: res.status, body: (res.json ?? {}) as Record<string, unknown> };
  };

  beforeAll(async () => {
    ca = await createCa('kubernetes');
    const serving = await issueLeafPem(ca, { cn: 'kube-apiserver', usage: 'server' });
    admin = await issueLeafPem(ca, { cn: 'kubernetes-admin', orgs: ['system:masters'] });
    nobody = await issueLeafPem(ca, { cn: 'nobody' });
    const store = new MemoryStore();
    const reader = buildRegistries(store, []).reader;
    const identity = await createAccessControl({
      objects: reader,
      clientCaPem: ca.pem,
      serviceAccountKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
      issuer: 'https://kubernetes.default.svc.cluster.local',
    });
    for (const o of identity.defaultObjects) {
      const info = { ClusterRole: CLUSTER_ROLES, ClusterRoleBinding: CLUSTER_ROLE_BINDINGS, Role: ROLES, RoleBinding: ROLE_BINDINGS }[o.kind as string];
      if (!info) throw new Error(`no resource for default ${o.kind}`);
      await store.create(storageKey(info.group, info.plural, o.metadata?.namespace, o.metadata?.name), {
        ...o,
        metadata: { ...o.metadata, uid: o.metadata?.name, creationTimestamp: new Date().toISOString() },
      });
    }
    server = await startApiServer({
      store,
      logger: silentLogger(),
      tls: { certPem: serving.certPem, keyPem: serving.keyPem, clientCaPem: ca.pem },
      authenticator: identity.authenticator,
      authorizer: identity.authorizer,
      extraStrategies: identity.strategies,
      // As the embedded server: fields a body's schema does not declare are reported (fieldValidation).
      unknownFields: true,
    });
  });
  afterAll(() => server.close());

  it('answers 401 without credentials and for a bad token', async () => {
    expect((await call('GET', '/api/v1/namespaces/default/serviceaccounts')).status).toBe(401);
    const bad = await call('GET', '/api/v1/namespaces/default/serviceaccounts', { token: 'abc.def.ghi' });
    expect([bad.status, bad.body.message]).toEqual([401, 'Unauthorized']);
  });

  it('mints a token as system:masters, reviews it, and the token gets 403 on what it may not do', async () => {
    const sa = await call('POST', '/api/v1/namespaces/default/serviceaccounts', { client: admin, body: { metadata: { name: 'ci' } } });
    expect(sa.status).toBe(201);
    const tr = await call('POST', '/api/v1/namespaces/default/serviceaccounts/ci/token', { client: admin, body: { spec: {} } });
    expect(tr.status).toBe(201);
    const token = (tr.body.status as { token: string }).token;
    const review = await call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { client: admin, body: { spec: { token } } });
    expect(review.status).toBe(201);
    expect(review.body.status).toMatchObject({ authenticated: true, user: { username: 'system:serviceaccount:default:ci' } });
    const denied = await call('GET', '/api/v1/namespaces/default/secrets', { token });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'secrets is forbidden: User "system:serviceaccount:default:ci" cannot list resource "secrets" in API group "" in the namespace "default"',
    );
    const whoami = await call('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token, body: {} });
    expect(whoami.status).toBe(201);
    expect((whoami.body.status as { userInfo: { username: string } }).userInfo.username).toBe('system:serviceaccount:default:ci');
  });

  it('authorizes a client certificate user by RBAC, and can-i answers through SelfSubjectAccessReview', async () => {
    expect((await call('GET', '/api/v1/namespaces/default/serviceaccounts', { client: nobody })).status).toBe(403);
    const can = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      client: nobody,
      body: { spec: { resourceAttributes: { verb: 'create', group: 'certificates.k8s.io', resource: 'certificatesigningrequests' } } },
    });
    expect([can.status, (can.body.status as { allowed: boolean }).allowed]).toEqual([201, false]);
  });

  it('decodes a TokenReview body it has seen before as it did the first time: same answer, warnings, errors', async () => {
    expect((await call('POST', '/api/v1/namespaces/default/serviceaccounts', { client: admin, body: { metadata: { name: 'reviewed' } } })).status).toBe(201);
    const tr = await call('POST', '/api/v1/namespaces/default/serviceaccounts/reviewed/token', { client: admin, body: { spec: {} } });
    const token = (tr.body.status as { token: string }).token;
    const target = { url: server.url, caPem: ca.pem, admin };
    const post = (text: string, query = ''): Promise<RawResponse> => raw(target, 'POST', `/apis/authentication.k8s.io/v1/tokenreviews${query}`, { body: text });
    const twice = async (text: string, query = ''): Promise<RawResponse[]> => [await post(text, query), await post(text, query)];
    const plain = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    const [first, second] = await twice(plain);
    expect([first?.status, first?.json.status.authenticated, first?.json.status.user.username]).toEqual([201, true, 'system:serviceaccount:default:reviewed']);
    expect(second?.text).toBe(first?.text);
    // An unknown and a repeated field: reported each time, as fieldValidation asks.
    const odd = `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"${token}","bogus":1,"token":"${token}"}}`;
    for (const warned of await twice(odd, '?fieldValidation=Warn')) {
      expect([warned.status, warned.headers.warning]).toEqual([201, '299 - "unknown field \\"spec.bogus\\"", 299 - "duplicate field \\"spec.token\\""']);
      expect(warned.json.status.authenticated).toBe(true);
    }
    for (const strict of await twice(odd, '?fieldValidation=Strict')) {
      expect([strict.status, strict.json.message]).toEqual([
        400,
        'TokenReview in version "v1" cannot be handled as a TokenReview: strict decoding error: unknown field "spec.bogus", duplicate field "spec.token"',
      ]);
    }
    for (const ignored of await twice(odd, '?fieldValidation=Ignore')) expect([ignored.status, ignored.headers.warning]).toEqual([201, undefined]);
    const broken = plain.slice(0, -2);
    const [bad1, bad2] = await twice(broken);
    expect([bad1?.status, bad2?.status, bad2?.text]).toEqual([400, 400, bad1?.text]);
    // The same bytes once the account is gone: refused.
    expect((await call('DELETE', '/api/v1/namespaces/default/serviceaccounts/reviewed', { client: admin })).status).toBe(200);
    const gone = await post(plain);
    expect([gone.status, gone.json.status]).toEqual([201, { authenticated: false, error: '[invalid bearer token, serviceaccounts "reviewed" not found]' }]);
  });
});
