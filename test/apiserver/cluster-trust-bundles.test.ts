/**
 * certificates.k8s.io ClusterTrustBundles on the full embedded server over HTTPS, with the real
 * authenticator, RBAC and Node authorizers and admission chain: users act through the admin's
 * impersonation, so the attest check and who may read are decided as in a cluster.
 */
import { generateKeyPair } from '../../src/pki/keys.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { raw, rawAs, type Acting, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlWith } from '../kubectl/kubectl.js';

const G = 'certificates.k8s.io';
const V1 = `/apis/${G}/v1/clustertrustbundles`;
const BETA = `/apis/${G}/v1beta1/clustertrustbundles`;
const ALPHA = `/apis/${G}/v1alpha1/clustertrustbundles`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let srv: TestServer;
let caA: string;
let caB: string;
let leaf: string;

const as = (who: Acting, method: string, path: string, body?: unknown): Promise<RawResponse> => rawAs(srv, who, method, path, body);

const bundle = (name: string, trustBundle: string, signerName?: string, version = 'v1beta1'): Record<string, unknown> => ({
  apiVersion: `${G}/${version}`,
  kind: 'ClusterTrustBundle',
  metadata: { name },
  spec: signerName === undefined ? { trustBundle } : { signerName, trustBundle },
});

/** The causes of a 422, as `field: message`. */
async function invalid(body: unknown): Promise<string[]> {
  const res = await as('admin', 'POST', BETA, body);
  expect(res.status).toBe(422);
  expect(res.json.reason).toBe('Invalid');
  return (res.json.details.causes as { field: string; message: string }[]).map((c) => `${c.field}: ${c.message}`);
}

async function grant(user: string, rules: unknown[]): Promise<void> {
  const name = `ctb-${user}`;
  for (const [path, obj] of [
    [`${RBAC}/clusterroles`, { metadata: { name }, rules }],
    [
      `${RBAC}/clusterrolebindings`,
      { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }] },
    ],
  ] as const) {
    const res = await as('admin', 'POST', path, obj);
    expect(res.status).toBe(201);
  }
}

beforeAll(async () => {
  srv = await startTestServer();
  caA = (await createCertificateAuthority({ commonName: 'ctb-a' })).certPem;
  const b = await createCertificateAuthority({ commonName: 'ctb-b' });
  caB = b.certPem;
  const now = new Date();
  leaf = await issueCertificate(b, {
    subject: { commonName: 'leaf' },
    publicKeyPem: generateKeyPair('ECDSA-P256').publicKeyPem,
    usages: ['digital signature', 'client auth'],
    notBefore: now,
    notAfter: new Date(now.getTime() + 3600_000),
  });
});

afterAll(async () => {
  await srv.close();
});

describe('serving', () => {
  it('is served in v1 (preferred, beside CertificateSigningRequests), v1beta1 and v1alpha1', async () => {
    const group = (await as('admin', 'GET', `/apis/${G}`)).json;
    expect(group.preferredVersion.version).toBe('v1');
    expect(group.versions.map((v: { version: string }) => v.version)).toEqual(['v1', 'v1beta1', 'v1alpha1']);
    const ctb = expect.objectContaining({ name: 'clustertrustbundles', kind: 'ClusterTrustBundle', namespaced: false, singularName: 'clustertrustbundle' });
    const v1 = (await as('admin', 'GET', `/apis/${G}/v1`)).json;
    expect(v1.resources.map((r: { name: string }) => r.name)).toEqual(expect.arrayContaining(['certificatesigningrequests', 'clustertrustbundles']));
    expect(v1.resources).toContainEqual(ctb);
    for (const version of ['v1beta1', 'v1alpha1']) {
      const list = (await as('admin', 'GET', `/apis/${G}/${version}`)).json;
      expect(list.resources).toEqual(expect.arrayContaining([ctb]));
    }
    const openapi = (await as('admin', 'GET', `/openapi/v3/apis/${G}/v1`)).json;
    expect(Object.keys(openapi.components.schemas)).toEqual(expect.arrayContaining(['io.k8s.api.certificates.v1.ClusterTrustBundle', 'io.k8s.api.certificates.v1.CertificateSigningRequest']));
    expect(openapi.paths).toHaveProperty([`/apis/${G}/v1/clustertrustbundles/{name}`]);
  });

  it('stores one object, seen in every version', async () => {
    const created = await as('admin', 'POST', V1, bundle('all-versions', caA, undefined, 'v1'));
    expect([created.status, created.json.apiVersion]).toEqual([201, `${G}/v1`]);
    expect(created.json.spec).toEqual({ trustBundle: caA });
    const alpha = await as('admin', 'GET', `${ALPHA}/all-versions`);
    expect([alpha.status, alpha.json.apiVersion, alpha.json.metadata.uid]).toEqual([200, `${G}/v1alpha1`, created.json.metadata.uid]);
    const updated = await as('admin', 'PUT', `${ALPHA}/all-versions`, { ...alpha.json, spec: { trustBundle: caA + caB } });
    expect(updated.status).toBe(200);
    for (const [path, version] of [[BETA, 'v1beta1'], [V1, 'v1']]) {
      const got = await as('admin', 'GET', `${path}/all-versions`);
      expect([got.json.apiVersion, got.json.spec.trustBundle, got.json.metadata.resourceVersion]).toEqual([`${G}/${version}`, caA + caB, updated.json.metadata.resourceVersion]);
    }
    const listed = await as('admin', 'GET', V1);
    expect([listed.json.kind, listed.json.apiVersion]).toEqual(['ClusterTrustBundleList', `${G}/v1`]);
    expect(listed.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('all-versions');
    expect((await as('admin', 'DELETE', `${V1}/all-versions`)).status).toBe(200);
    expect((await as('admin', 'GET', `${ALPHA}/all-versions`)).status).toBe(404);
  });

  it('watches in v1 what is written through v1beta1', async () => {
    const list = await as('admin', 'GET', V1);
    const watch = raw(srv, 'GET', `${V1}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}&timeoutSeconds=2`);
    expect((await as('admin', 'POST', BETA, bundle('watched-in-v1', caA))).status).toBe(201);
    const events = (await watch).text.trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { apiVersion: string; metadata: { name: string } } });
    expect(events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name])).toContainEqual(['ADDED', `${G}/v1`, 'watched-in-v1']);
  });

  it('decodes a protobuf body, as typed clients send it', async () => {
    // Length-delimited fields only: tag (field << 3 | 2), varint length, bytes.
    const field = (n: number, value: Buffer | string): Buffer => {
      const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value);
      const len: number[] = [];
      for (let v = bytes.length; ; v >>>= 7) {
        if (v < 0x80) {
          len.push(v);
          break;
        }
        len.push((v & 0x7f) | 0x80);
      }
      return Buffer.concat([Buffer.from([(n << 3) | 2, ...len]), bytes]);
    };
    const object = Buffer.concat([field(1, field(1, 'example.com:pb:one')), field(2, Buffer.concat([field(1, 'example.com/pb'), field(2, caA)]))]);
    const typeMeta = Buffer.concat([field(1, `${G}/v1alpha1`), field(2, 'ClusterTrustBundle')]);
    const body = Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), field(1, typeMeta), field(2, object)]);
    const res = await raw(srv, 'POST', ALPHA, { body, contentType: 'application/vnd.kubernetes.protobuf' });
    expect([res.status, res.json.metadata?.name, res.json.spec]).toEqual([201, 'example.com:pb:one', { signerName: 'example.com/pb', trustBundle: caA }]);
  });

  it('refuses an update without a resourceVersion, as upstream (no unconditional updates)', async () => {
    expect((await as('admin', 'POST', BETA, bundle('conditional', caA))).status).toBe(201);
    const res = await as('admin', 'PUT', `${BETA}/conditional`, bundle('conditional', caB));
    expect([res.status, res.json.reason]).toEqual([422, 'Invalid']);
    expect(res.json.message).toMatch(/metadata.resourceVersion: Invalid value: .*: must be specified for an update/);
  });
});

describe('validation (upstream messages)', () => {
  const omitted = (detail: string): string => `spec.trustBundle: Invalid value: "<value omitted>": ${detail}`;

  it('accepts CA certificates with text around them', async () => {
    expect((await as('admin', 'POST', BETA, bundle('with-text', `# ours\n${caA}\nsome text\n${caB}`))).status).toBe(201);
  });

  it('rejects blocks that are not CA certificates, each by index', async () => {
    const key = generateKeyPair('ECDSA-P256').privateKeyPem;
    expect(await invalid(bundle('bad-type', caA + key))).toEqual([omitted(`entry 1 has bad block type: ${key.split('\n')[0]?.slice(11, -5)}`)]);
    expect(await invalid(bundle('leaf', leaf))).toEqual([omitted('entry 0 does not have the CA bit set')]);
    const garbage = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    expect(await invalid(bundle('garbage', caA + garbage))).toEqual([omitted('entry 1 does not parse as X.509')]);
  });

  it('rejects PEM block headers', async () => {
    const lines = caA.trim().split('\n');
    const withHeader = [lines[0], 'Proc-Type: 4,ENCRYPTED', ...lines.slice(1)].join('\n') + '\n';
    expect(await invalid(bundle('headers', withHeader))).toEqual([omitted('entry 0 has PEM block headers')]);
  });

  it('rejects duplicates and an empty bundle', async () => {
    expect(await invalid(bundle('dup', caA + caB + caA))).toEqual([omitted('duplicate trust anchor (indices [0 2])')]);
    expect(await invalid(bundle('empty', 'no certificates here'))).toEqual([omitted('at least one trust anchor must be provided')]);
  });

  it('rejects a bundle over 1 MiB', async () => {
    const big = caA + '#'.repeat(1024 * 1024);
    expect(await invalid(bundle('big', big))).toEqual(['spec.trustBundle: Too long: may not be more than 1048576 bytes']);
  });

  it('ties the name to the signer name', async () => {
    expect(await invalid(bundle('example.com:foo:a', caA))).toEqual([
      'metadata.name: Invalid value: "example.com:foo:a": ClusterTrustBundle without signer name must not have ":" in its name',
    ]);
    expect(await invalid(bundle('other:a', caA, 'example.com/foo'))).toEqual([
      'metadata.name: Invalid value: "other:a": ClusterTrustBundle for signerName example.com/foo must be named with prefix example.com:foo:',
    ]);
    expect(await invalid(bundle('example.com:foo:Bad', caA, 'example.com/foo'))).toEqual([
      expect.stringMatching(/^metadata\.name: Invalid value: "example\.com:foo:Bad": a lowercase RFC 1123 subdomain/),
    ]);
    expect(await invalid(bundle('foo:a', caA, 'foo'))).toEqual([
      `spec.signerName: Invalid value: "foo": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
    ]);
  });

  it('keeps signerName immutable and parses an unchanged bundle no more', async () => {
    expect((await as('admin', 'POST', BETA, bundle('example.com:foo:immutable', caA, 'example.com/foo'))).status).toBe(201);
    const stored = (await as('admin', 'GET', `${BETA}/example.com:foo:immutable`)).json;
    const res = await as('admin', 'PUT', `${BETA}/example.com:foo:immutable`, { ...stored, spec: { ...stored.spec, signerName: 'example.com/bar' } });
    expect(res.status).toBe(422);
    expect(res.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)).toEqual([
      'metadata.name: Invalid value: "example.com:foo:immutable": ClusterTrustBundle for signerName example.com/bar must be named with prefix example.com:bar:',
      'spec.signerName: Invalid value: "example.com/bar": field is immutable',
    ]);
  });
});

describe('attest and read access', () => {
  beforeAll(async () => {
    const write = { apiGroups: [G], resources: ['clustertrustbundles'], verbs: ['create', 'update', 'get', 'list'] };
    await grant('writer', [write]);
    await grant('attester', [write, { apiGroups: [G], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['attest'] }]);
    await grant('one-signer', [write, { apiGroups: [G], resources: ['signers'], resourceNames: ['example.com/one'], verbs: ['attest'] }]);
  });

  it('needs attest on the signer to write a bundle naming it', async () => {
    const writer = { user: 'writer' };
    const refused = await as(writer, 'POST', BETA, bundle('example.com:foo:w', caA, 'example.com/foo'));
    expect([refused.status, refused.json.reason, refused.json.message]).toEqual([
      403,
      'Forbidden',
      'clustertrustbundles.certificates.k8s.io "example.com:foo:w" is forbidden: user not permitted to attest for signerName "example.com/foo"',
    ]);
    expect((await as(writer, 'POST', BETA, bundle('writer-plain', caA))).status).toBe(201);
    expect((await as({ user: 'attester' }, 'POST', BETA, bundle('example.com:foo:w', caA, 'example.com/foo'))).status).toBe(201);
    expect((await as({ user: 'one-signer' }, 'POST', BETA, bundle('example.com:one:w', caA, 'example.com/one'))).status).toBe(201);
    expect((await as({ user: 'one-signer' }, 'POST', BETA, bundle('example.com:two:w', caA, 'example.com/two'))).status).toBe(403);
  });

  it('checks updates too, except those touching only finalizers and owner references', async () => {
    const stored = (await as('admin', 'GET', `${BETA}/example.com:foo:w`)).json;
    const changed = await as({ user: 'writer' }, 'PUT', `${BETA}/example.com:foo:w`, { ...stored, spec: { ...stored.spec, trustBundle: caB } });
    expect(changed.status).toBe(403);
    const gcOnly = { ...stored, metadata: { ...stored.metadata, finalizers: ['example.com/keep'] } };
    expect((await as({ user: 'writer' }, 'PUT', `${BETA}/example.com:foo:w`, gcOnly)).status).toBe(200);
  });

  it('is readable by every authenticated user and by nodes, writable by none of them without a grant', async () => {
    const node = await as({ user: 'system:node:n1', groups: ['system:nodes'] }, 'GET', V1);
    expect(node.status).toBe(200);
    for (const who of [{ user: 'stranger', groups: ['system:authenticated'] }, { user: 'system:serviceaccount:ns1:app', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'] }]) {
      for (const path of [V1, BETA, ALPHA, `${V1}/writer-plain`]) expect([path, (await as(who, 'GET', path)).status]).toEqual([path, 200]);
      expect((await as(who, 'POST', V1, bundle('stranger', caA, undefined, 'v1'))).status).toBe(403);
      expect((await as(who, 'DELETE', `${V1}/writer-plain`)).status).toBe(403);
    }
    const binding = (await as('admin', 'GET', `${RBAC}/clusterrolebindings/kube-identity:cluster-trust-bundle-reader`)).json;
    expect([binding.roleRef.name, binding.subjects]).toEqual(['kube-identity:cluster-trust-bundle-reader', [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' }]]);
    // Anonymous requests stay outside: they are not authenticated.
    expect((await raw(srv, 'GET', V1, { anonymous: true })).status).toBe(401);
  });

  it('filters on spec.signerName', async () => {
    const names = async (selector: string): Promise<string[]> => {
      const res = await as('admin', 'GET', `${ALPHA}?fieldSelector=${encodeURIComponent(selector)}`);
      expect(res.status).toBe(200);
      return (res.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort();
    };
    expect(await names('spec.signerName=example.com/foo')).toEqual(['example.com:foo:immutable', 'example.com:foo:w']);
    expect(await names('spec.signerName=example.com/one')).toEqual(['example.com:one:w']);
    expect(await names('spec.signerName=')).toEqual(expect.arrayContaining(['writer-plain', 'with-text']));
    expect(await names('spec.signerName=')).not.toContain('example.com:one:w');
    const bad = await as('admin', 'GET', `${BETA}?fieldSelector=spec.nope%3Dx`);
    expect(bad.status).toBe(400);
  });
});

describe('kubectl', () => {
  it('applies, gets, explains and deletes a bundle', async () => {
    const manifest = [
      `apiVersion: ${G}/v1`,
      'kind: ClusterTrustBundle',
      'metadata: {name: "example.com:kubectl:one"}',
      'spec:',
      '  signerName: example.com/kubectl',
      '  trustBundle: |',
      ...caA.trim().split('\n').map((l) => `    ${l}`),
    ].join('\n');
    const applied = await kubectlWith(srv, ['apply', '-f', '-'], { input: manifest });
    expect([applied.code, applied.stderr, applied.stdout.trim()]).toEqual([0, '', 'clustertrustbundle.certificates.k8s.io/example.com:kubectl:one created']);
    const got = await kubectlWith(srv, ['get', 'clustertrustbundles', 'example.com:kubectl:one', 'writer-plain']);
    expect(got.code).toBe(0);
    const rows = got.stdout.trim().split('\n').map((l) => l.split(/\s{2,}/));
    expect(rows).toEqual([['NAME', 'SIGNERNAME'], ['example.com:kubectl:one', 'example.com/kubectl'], ['writer-plain', '<none>']]);
    const explained = await kubectlWith(srv, ['explain', 'clustertrustbundles.spec']);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('trustBundle');
    expect(explained.stdout).toContain('signerName');
    const deleted = await kubectlWith(srv, ['delete', 'clustertrustbundle', 'example.com:kubectl:one']);
    expect([deleted.code, deleted.stdout.trim()]).toEqual([0, 'clustertrustbundle.certificates.k8s.io "example.com:kubectl:one" deleted']);
  });
});
