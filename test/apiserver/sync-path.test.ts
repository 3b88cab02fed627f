/**
 * The request pipeline's synchronous fast path (issue 29) against the path it shortcuts. Two servers
 * get the same requests in the same order:
 * - fast: as `kube-identity apiserver` builds it, with the RBAC index, the node graph and the
 *   bootstrap-token Secrets in memory, and the pipeline asking authenticateNow/authorizeNow, so a
 *   remembered certificate, token or decision is answered without an async step;
 * - reference: no caches (every decision and token reads the store), and an authenticator and
 *   authorizer that only answer with promises, so every step is asynchronous as before.
 * Each request must get the same status and body, the same audit events and the same authentication
 * and authorization metrics, for anonymous callers, a bootstrap (join) token, a node, a namespace user
 * and impersonation; RBAC changes must take effect on the very next request on both.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { Auditor } from '../../src/apiserver/audit/auditor.js';
import type { AuditEvent } from '../../src/apiserver/audit/types.js';
import { BootstrapTokenSecrets } from '../../src/apiserver/authentication/bootstrap-token-secrets.js';
import type { AuthenticationRequest, Authenticator } from '../../src/apiserver/authentication/types.js';
import type { Authorizer } from '../../src/apiserver/authorization/authorizer.js';
import { NodeGraph } from '../../src/apiserver/authorization/node/node-graph.js';
import { RbacIndex } from '../../src/apiserver/authorization/rbac/rbac-index.js';
import { FLOW_CONTROL_DEFAULTS } from '../../src/apiserver/flowcontrol/flow-control.js';
import { objectReader } from '../../src/apiserver/registry/registries.js';
import { createAccessControl, type AccessControl } from '../../src/apiserver/server/access-control.js';
import { ensureCredentials } from '../../src/apiserver/server/credentials.js';
import { startApiServer } from '../../src/apiserver/server/server.js';
import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import { isPromise } from '../../src/lib/maybe-promise.js';
import { silentLogger } from '../../src/log/logger.js';
import { createCa, issueLeafPem, type TestCa } from '../auth/fixtures.js';
import { byId, eventsWhen, logAudit } from '../audit/helpers.js';
import { raw, type RawOptions, type RawResponse } from '../helpers/http.js';

type Client = { certPem: string; keyPem: string };

interface Side {
  url: string;
  caPem: string;
  admin: Client;
  access: AccessControl;
  auditFile: string;
  registry: Registry;
  close(): Promise<void>;
}

/** Only promises, as every authenticator was before the fast path: the pipeline takes the async path throughout. */
const asyncOnlyAuthenticator = (a: Authenticator): Authenticator => ({ authenticate: (req: AuthenticationRequest) => a.authenticate(req) });
const asyncOnlyAuthorizer = (a: Authorizer): Authorizer => ({ authorize: (attrs) => a.authorize(attrs) });

const POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n';

async function startSide(kind: 'fast' | 'reference', ca: TestCa, admin: Client, dir: string): Promise<Side> {
  const dataDir = mkdtempSync(path.join(dir, `${kind}-`));
  const credentials = await ensureCredentials(dataDir);
  const store = new MemoryStore();
  const registry = new Registry();
  const caches = kind === 'fast' ? { rbacIndex: new RbacIndex(store), nodeGraph: new NodeGraph(store, registry), bootstrapTokens: new BootstrapTokenSecrets(store) } : {};
  const access = await createAccessControl({
    objects: objectReader(store),
    ...caches,
    clientCaPem: ca.pem,
    serviceAccountKey: credentials.serviceAccountKeyPem,
    issuer: 'https://kubernetes.default.svc.cluster.local',
    anonymous: true,
  });
  const policyFile = path.join(dataDir, 'policy.yaml');
  writeFileSync(policyFile, POLICY);
  const auditFile = path.join(dataDir, 'audit.log');
  const auditor = await Auditor.create(logAudit(policyFile, auditFile), registry, silentLogger());
  const server = await startApiServer({
    store,
    logger: silentLogger(),
    tls: { certPem: credentials.servingCertPem, keyPem: credentials.servingKeyPem, clientCaPem: ca.pem },
    port: 0,
    authenticator: kind === 'fast' ? access.authenticator : asyncOnlyAuthenticator(access.authenticator),
    authorizer: kind === 'fast' ? access.authorizer : asyncOnlyAuthorizer(access.authorizer),
    extraStrategies: access.strategies,
    admissionPlugins: ['NodeRestriction'],
    metricsRegistry: registry,
    auditor,
    defaultObjects: access.defaultObjects,
    flowControl: { ...FLOW_CONTROL_DEFAULTS, maxEventLoopDelayMs: 0 },
  });
  return {
    url: server.url,
    caPem: credentials.caPem,
    admin,
    access,
    auditFile,
    registry,
    async close() {
      await server.close();
      caches.rbacIndex?.stop();
      caches.nodeGraph?.stop();
      caches.bootstrapTokens?.stop();
      await store.close();
    },
  };
}

/** A Status without the uid of the object it names, which differs between two stores. */
function withoutUid<T>(status: T): T {
  const details = (status as { details?: { uid?: string } } | undefined)?.details;
  if (!details?.uid) return status;
  const { uid: _uid, ...rest } = details;
  return { ...status, details: rest };
}

/** What a response says, without what differs between two stores (uids, times, versions). */
function answer(r: RawResponse): unknown {
  const body = r.json as { kind?: string; metadata?: { name?: string }; items?: unknown[] } | undefined;
  if (r.status >= 400 || body?.kind === 'Status') return { status: r.status, body: withoutUid(body) };
  return { status: r.status, kind: body?.kind, name: body?.metadata?.name, items: body?.items?.length };
}

/** An audit event without its id, times and the stored object's version. */
function comparable(e: AuditEvent): unknown {
  const { auditID: _id, requestReceivedTimestamp: _received, stageTimestamp: _stage, objectRef, responseStatus, ...rest } = e;
  const out = { ...rest, responseStatus: withoutUid(responseStatus) };
  if (!objectRef) return out;
  const { uid: _uid, resourceVersion: _rv, ...ref } = objectRef;
  return { ...out, objectRef: ref };
}

const final = (e: AuditEvent): boolean => e.stage === 'ResponseComplete' || e.stage === 'Panic' || (e.stage === 'ResponseStarted' && e.responseStatus?.code === 401);

/** The request's answer and its audit events, once its last event is written. */
async function send(side: Side, method: string, p: string, opts: RawOptions & { as?: Client } = {}): Promise<{ answer: unknown; events: unknown[] }> {
  const { as, ...rest } = opts;
  const r = await raw({ url: side.url, caPem: side.caPem, admin: side.admin }, method, p, { ...rest, client: as ?? rest.client });
  const id = r.headers['audit-id'];
  const evs = byId(await eventsWhen(side.auditFile, (all) => byId(all, id).some(final)), id);
  return { answer: answer(r), events: evs.map(comparable) };
}

/** The authentication, authorization and flow-control counters of a side's metrics. */
async function decisionMetrics(side: Side): Promise<string[]> {
  const text = await side.registry.metrics();
  return text
    .split('\n')
    .filter((l) => /^(authentication_attempts|authenticated_user_requests|apiserver_authorization_decisions_total|apiserver_request_total|apiserver_flowcontrol_dispatched_requests_total|apiserver_flowcontrol_rejected_requests_total)\{/.test(l))
    .sort();
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const JOIN_TOKEN = 'abcdef.0123456789abcdef';

describe('synchronous fast path', () => {
  let dir: string;
  let fast: Side;
  let reference: Side;
  let alice: Client;
  let node: Client;
  let stranger: Client;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sync-path-'));
    const ca = await createCa('sync-path-ca');
    const admin = await issueLeafPem(ca, { cn: 'root', orgs: ['system:masters'] });
    alice = await issueLeafPem(ca, { cn: 'alice' });
    node = await issueLeafPem(ca, { cn: 'system:node:n1', orgs: ['system:nodes'] });
    stranger = await issueLeafPem(ca, { cn: 'mallory', orgs: ['team-b'] });
    fast = await startSide('fast', ca, admin, dir);
    reference = await startSide('reference', ca, admin, dir);
    for (const side of [fast, reference]) {
      const post = async (p: string, body: unknown): Promise<void> => {
        const r = await raw({ url: side.url, caPem: side.caPem, admin: side.admin }, 'POST', p, { body });
        if (r.status !== 201) throw new Error(`setup ${p}: ${r.status} ${r.text}`);
      };
      await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
      await post('/api/v1/namespaces/team/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: '1' } });
      await post('/api/v1/namespaces/team/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { k: b64('v') } });
      await post('/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'reader' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      });
      await post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
      await post('/api/v1/namespaces/kube-system/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'bootstrap-token-abcdef' },
        type: 'bootstrap.kubernetes.io/token',
        data: {
          'token-id': b64('abcdef'),
          'token-secret': b64('0123456789abcdef'),
          'usage-bootstrap-authentication': b64('true'),
          'auth-extra-groups': b64('system:bootstrappers:kubeadm:default-node-token'),
        },
      });
    }
  });

  afterAll(async () => {
    await fast?.close();
    await reference?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sends the request to both sides (fast first, then reference) and expects the same answer and audit events. */
  async function same(method: string, p: string, opts: RawOptions & { as?: Client } = {}): Promise<unknown> {
    const a = await send(fast, method, p, opts);
    const b = await send(reference, method, p, opts);
    expect({ request: `${method} ${p}`, ...a }).toEqual({ request: `${method} ${p}`, ...b });
    return a.answer;
  }

  const bindAlice = async (): Promise<unknown> =>
    same('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'readers' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
      },
    });

  it('answers anonymous callers alike', async () => {
    expect(await same('GET', '/healthz', { anonymous: true })).toMatchObject({ status: 200 });
    expect(await same('GET', '/version', { anonymous: true })).toMatchObject({ status: 200 });
    expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { anonymous: true })).toMatchObject({ status: 401 });
    expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { token: 'not-a-token' })).toMatchObject({ status: 401 });
    expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { token: 'abcdef.ffffffffffffffff' })).toMatchObject({ status: 401 });
  });

  it('answers a join token alike', async () => {
    for (let i = 0; i < 2; i++) {
      expect(await same('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { token: JOIN_TOKEN })).toMatchObject({ status: 200, kind: 'CertificateSigningRequestList' });
      expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { token: JOIN_TOKEN })).toMatchObject({ status: 403 });
      expect(await same('GET', '/api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef', { token: JOIN_TOKEN })).toMatchObject({ status: 403 });
    }
  });

  it('answers a node alike', async () => {
    for (let i = 0; i < 2; i++) {
      expect(await same('GET', '/api/v1/nodes/n1', { as: node })).toMatchObject({ status: 200, kind: 'Node', name: 'n1' });
      expect(await same('GET', '/api/v1/nodes/n2', { as: node })).toMatchObject({ status: 403 });
      expect(await same('GET', '/api/v1/namespaces/team/secrets/s1', { as: node })).toMatchObject({ status: 403 });
      expect(await same('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { as: node })).toMatchObject({ status: 200 });
      expect(await same('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', { as: node })).toMatchObject({ status: 404 });
    }
  });

  it('answers a namespace user alike, and an RBAC change takes effect at once on both', async () => {
    expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { as: alice })).toMatchObject({ status: 403 });
    expect(await bindAlice()).toMatchObject({ status: 201 });
    for (let i = 0; i < 2; i++) {
      expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { as: alice })).toMatchObject({ status: 200, name: 'cm1' });
      expect(await same('GET', '/api/v1/namespaces/team/configmaps', { as: alice })).toMatchObject({ status: 200, items: 1 });
      expect(await same('DELETE', '/api/v1/namespaces/team/configmaps/cm1', { as: alice })).toMatchObject({ status: 403 });
      expect(await same('GET', '/api/v1/namespaces/default/configmaps/cm1', { as: alice })).toMatchObject({ status: 403 });
      expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { as: stranger })).toMatchObject({ status: 403 });
    }
    // Revoked: the very next request is refused on both, as a store read would refuse it.
    expect(await same('DELETE', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings/readers')).toMatchObject({ status: 200 });
    expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { as: alice })).toMatchObject({ status: 403 });
    expect(await bindAlice()).toMatchObject({ status: 201 });
    expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { as: alice })).toMatchObject({ status: 200 });
  });

  it('answers impersonation alike', async () => {
    const asAlice = { 'Impersonate-User': 'alice' };
    for (let i = 0; i < 2; i++) {
      expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { headers: asAlice })).toMatchObject({ status: 200 });
      expect(await same('DELETE', '/api/v1/namespaces/team/configmaps/cm1', { headers: asAlice })).toMatchObject({ status: 403 });
      expect(await same('GET', '/api/v1/nodes/n1', { headers: { 'Impersonate-User': 'system:node:n1', 'Impersonate-Group': 'system:nodes' } })).toMatchObject({ status: 200 });
      expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { as: alice, headers: { 'Impersonate-User': 'root' } })).toMatchObject({ status: 403 });
      expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { headers: { 'Impersonate-Group': 'system:masters' } })).toMatchObject({ status: 400 });
      expect(await same('GET', '/api/v1/namespaces/team/configmaps/cm1', { token: JOIN_TOKEN, headers: asAlice })).toMatchObject({ status: 403 });
    }
  });

  it('counts the same authentications, decisions and requests on both', async () => {
    const [a, b] = await Promise.all([decisionMetrics(fast), decisionMetrics(reference)]);
    expect(a.length).toBeGreaterThan(5);
    expect(a).toEqual(b);
  });

  it('answers a remembered caller and decision without a promise, and only the fast side does', async () => {
    const request = (cert: Client): AuthenticationRequest => ({
      headers: {},
      clientCertificateChain: [new Uint8Array(Buffer.from(cert.certPem.replace(/-----[^-]+-----|\s/g, ''), 'base64'))],
    });
    const user = fast.access.authenticator.authenticateNow?.(request(alice));
    expect(isPromise(user)).toBe(false);
    expect(user).toMatchObject({ username: 'alice', groups: ['system:authenticated'] });
    const join = fast.access.authenticator.authenticateNow?.({ headers: { authorization: `Bearer ${JOIN_TOKEN}` }, clientCertificateChain: [] });
    expect(isPromise(join)).toBe(false);
    expect(join).toMatchObject({ username: 'system:bootstrap:abcdef' });
    const attrs = { user: { username: 'alice', groups: ['system:authenticated'] }, verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'team', name: 'cm1' };
    const decision = fast.access.authorizer.authorizeNow?.(attrs);
    expect(isPromise(decision)).toBe(false);
    expect(decision).toMatchObject({ allowed: true });
    // Without the index every decision reads the store.
    expect(isPromise(reference.access.authorizer.authorizeNow?.(attrs))).toBe(true);
  });
});
