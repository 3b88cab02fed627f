/**
 * Percent-encoded names in URLs, as kube-apiserver reads them: Go decodes the path (url.PathUnescape)
 * and requestinfo.go splits it, so `system%3Anode-bootstrapper` and `system:node-bootstrapper` name
 * the same object, for every verb and for RBAC. We decode each segment once after splitting, so an
 * encoded `/` or `..` stays inside its name, and answer those names as upstream's storage key
 * functions do (400 "Name parameter invalid"); an invalid escape is 400 as Go's server answers it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { raw, openWatch, type RawOptions } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const G = 'rbac.authorization.k8s.io';

let s: TestServer;
const alice: RawOptions = { token: 'alice-token' };

async function admin(method: string, path: string, body?: unknown): Promise<Awaited<ReturnType<typeof raw>>> {
  const r = await raw(s, method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r;
}

beforeAll(async () => {
  s = await startTestServer({ tokenFile: 'alice-token,alice,uid-alice,"dev"\n' });
  await admin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'test:encoded' }, rules: [] });
  await admin('POST', `${RBAC}/clusterroles`, {
    metadata: { name: 'alice:by-name' },
    rules: [
      { apiGroups: [G], resources: ['clusterroles'], resourceNames: ['test:encoded'], verbs: ['get', 'update', 'patch', 'delete', 'watch'] },
      { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], resourceNames: ['node:csr-1'], verbs: ['get', 'update'] },
    ],
  });
  await admin('POST', `${RBAC}/clusterrolebindings`, {
    metadata: { name: 'alice:by-name' },
    roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'alice:by-name' },
    subjects: [{ kind: 'User', apiGroup: G, name: 'alice' }],
  });
  await admin('POST', CSRS, {
    metadata: { name: 'node:csr-1' },
    spec: { request: Buffer.from(await csrPem()).toString('base64'), signerName: 'example.com/encoded', usages: ['client auth'] },
  });
});
afterAll(async () => {
  await s.close();
});

function csrPem(): Promise<string> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return createCertificateRequestPem({ privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), commonName: 'encoded' });
}

describe('an encoded name is the decoded name, for every verb and for RBAC', () => {
  it('get, update, patch and watch with `%3A` reach the object, authorized on its decoded name', async () => {
    const path = `${RBAC}/clusterroles/test%3Aencoded`;
    const got = await raw(s, 'GET', path, alice);
    expect(got.status).toBe(200);
    expect(got.json.metadata.name).toBe('test:encoded');

    const put = await raw(s, 'PUT', path, { ...alice, body: { ...got.json, metadata: { ...got.json.metadata, labels: { via: 'put' } } } });
    expect(put.status).toBe(200);
    expect(put.json.metadata.labels).toEqual({ via: 'put' });

    const patch = await raw(s, 'PATCH', path, { ...alice, body: { metadata: { labels: { via: 'patch' } } }, contentType: 'application/merge-patch+json' });
    expect(patch.status).toBe(200);
    expect(patch.json.metadata.labels).toEqual({ via: 'patch' });

    const w = await openWatch(s, `${RBAC}/watch/clusterroles/test%3Aencoded`);
    try {
      const [ev] = await w.waitFor(1);
      expect(ev.object.metadata.name).toBe('test:encoded');
    } finally {
      w.close();
    }
  });

  it('create of a subresource and PUT /approval with an encoded name', async () => {
    await admin('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bot' } });
    const token = await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts/%62ot/token', { body: { spec: {} } });
    expect(token.status).toBe(201);
    expect(token.json.status.token).toEqual(expect.any(String));

    const csr = (await admin('GET', `${CSRS}/node:csr-1`)).json;
    const approved = {
      ...csr,
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'encoded' }] },
    };
    const r = await raw(s, 'PUT', `${CSRS}/node%3Acsr-1/approval`, { body: approved });
    expect(r.status).toBe(200);
    expect(r.json.status.conditions[0].type).toBe('Approved');
  });

  it('delete with an encoded name removes the object', async () => {
    await admin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'test:doomed' }, rules: [] });
    const r = await raw(s, 'DELETE', `${RBAC}/clusterroles/test%3Adoomed`);
    expect(r.status).toBe(200);
    expect((await raw(s, 'GET', `${RBAC}/clusterroles/test:doomed`)).status).toBe(404);
    // alice's grant names test:encoded: the encoded spelling is authorized as the same name.
    expect((await raw(s, 'DELETE', `${RBAC}/clusterroles/system%3Anode-bootstrapper`, alice)).status).toBe(403);
  });
});

describe('names that cannot be a path segment never address another object', () => {
  const cases: [string, string, string, number, string][] = [
    ['%2F is not a separator: no /approval through the name', 'PUT', `${CSRS}/node%3Acsr-1%2Fapproval`, 400,
      'Name parameter invalid: "node:csr-1/approval": may not contain \'/\''],
    ['%2e%2e is the name "..", not a step up', 'GET', '/api/v1/namespaces/default/serviceaccounts/%2e%2e', 400,
      'Name parameter invalid: "..": may not be \'..\''],
    ['a raw .. is not resolved either', 'GET', '/api/v1/namespaces/default/serviceaccounts/..', 400,
      'Name parameter invalid: "..": may not be \'..\''],
    ['%2e%2e cannot climb out of a namespace', 'GET', '/api/v1/namespaces/default/%2e%2e/default', 404,
      'the server could not find the requested resource'],
    ['double encoding is decoded once', 'GET', `${RBAC}/clusterroles/test%253Aencoded`, 400,
      'Name parameter invalid: "test%3Aencoded": may not contain \'%\''],
    ['an invalid escape', 'GET', `${RBAC}/clusterroles/test%zzencoded`, 400, 'invalid URL escape "%zz"'],
    ['a truncated escape', 'DELETE', `${RBAC}/clusterroles/test%3`, 400, 'invalid URL escape "%3"'],
  ];

  it.each(cases)('%s', async (_name, method, path, code, message) => {
    const before = s.store.currentRevision();
    const body = method === 'PUT' ? (await admin('GET', `${CSRS}/node:csr-1`)).json : undefined;
    const r = await raw(s, method, path, { verbatimPath: true, ...(body ? { body } : {}) });
    expect(r.status).toBe(code);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', code, message });
    expect(s.store.currentRevision()).toBe(before);
  });

  it('authorizes the decoded name: a grant on one CSR never reaches its /approval', async () => {
    const csr = (await admin('GET', `${CSRS}/node:csr-1`)).json;
    const r = await raw(s, 'PUT', `${CSRS}/node%3Acsr-1%2Fapproval`, { ...alice, body: csr });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('"node:csr-1/approval" is forbidden');
  });

  it('answers an invalid escape with 400 before authentication, as Go\'s server does', async () => {
    const r = await raw(s, 'GET', `${RBAC}/clusterroles/%zz`, { anonymous: true });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe('invalid URL escape "%zz"');
  });
});
