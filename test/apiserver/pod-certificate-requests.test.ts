/**
 * certificates.k8s.io PodCertificateRequests on the full embedded server over HTTPS (authenticator,
 * Node and RBAC authorizers, admission chain): both served versions over one stored object, create
 * validation with real keys and stub PKCS#10 requests, immutability, field selectors and watch, and
 * kubectl. /status rules are in pod-certificate-status.test.ts, nodes and users in
 * test/auth/pod-certificate-requests.test.ts.
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlWith } from '../kubectl/kubectl.js';
import { G, pcrBody, pcrPath, podOnNode, testKey, type PodIdentity, type TestKey } from '../helpers/pod-certificates.js';

let srv: TestServer;
let id: PodIdentity;
let p256: TestKey;
const NS = 'pcr-api';

const post = (version: 'v1' | 'v1beta1', body: unknown, query = ''): Promise<RawResponse> => raw(srv, 'POST', pcrPath(version, NS) + query, { body });
const causes = (res: RawResponse): string[] => (res.json.details?.causes ?? []).map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);

/** The causes of the 422 a create gets. */
async function invalid(body: Record<string, unknown>, version: 'v1' | 'v1beta1' = 'v1'): Promise<string[]> {
  const res = await post(version, body);
  expect([res.status, res.json.reason]).toEqual([422, 'Invalid']);
  return causes(res);
}

beforeAll(async () => {
  srv = await startTestServer();
  id = await podOnNode(srv, NS, 'web', 'pcr-node', ['example.com/workload']);
  p256 = testKey('ECDSAP256');
}, 60_000);

afterAll(async () => {
  await srv.close();
});

describe('serving', () => {
  it('is in discovery in v1 and v1beta1, namespaced, with /status', async () => {
    for (const version of ['v1', 'v1beta1']) {
      const list = (await raw(srv, 'GET', `/apis/${G}/${version}`)).json;
      const names = (list.resources as { name: string }[]).map((r) => r.name);
      expect(names).toEqual(expect.arrayContaining(['podcertificaterequests', 'podcertificaterequests/status']));
      expect(list.resources.find((r: { name: string }) => r.name === 'podcertificaterequests')).toEqual(
        expect.objectContaining({ kind: 'PodCertificateRequest', namespaced: true, singularName: 'podcertificaterequest' }),
      );
    }
  });

  it('stores one object: v1beta1 keeps the deprecated key pair, v1 leaves it out and a v1 write keeps it', async () => {
    const created = await post('v1beta1', await pcrBody(id, p256, { name: 'legacy', version: 'v1beta1', legacy: true }));
    expect(created.status).toBe(201);
    expect(created.json.spec.maxExpirationSeconds).toBe(86400);
    expect(created.json.spec.pkixPublicKey).toBe(p256.spki.toString('base64'));
    expect(created.json.status).toEqual({});

    const v1 = await raw(srv, 'GET', pcrPath('v1', NS, 'legacy'));
    expect([v1.json.apiVersion, v1.json.metadata.uid, v1.json.spec.stubPKCS10Request]).toEqual([`${G}/v1`, created.json.metadata.uid, created.json.spec.stubPKCS10Request]);
    expect(Object.keys(v1.json.spec)).not.toContain('pkixPublicKey');
    expect(Object.keys(v1.json.spec)).not.toContain('proofOfPossession');

    const labelled = await raw(srv, 'PUT', pcrPath('v1', NS, 'legacy'), { body: { ...v1.json, metadata: { ...v1.json.metadata, labels: { via: 'v1' } } } });
    expect(labelled.status).toBe(200);
    const beta = await raw(srv, 'GET', pcrPath('v1beta1', NS, 'legacy'));
    expect([beta.json.metadata.labels, beta.json.spec.pkixPublicKey, beta.json.spec.proofOfPossession]).toEqual([
      { via: 'v1' },
      created.json.spec.pkixPublicKey,
      created.json.spec.proofOfPossession,
    ]);
  });

  it('decodes a protobuf body, as typed clients (kubelets) send it', async () => {
    // Length-delimited fields (tag = n << 3 | 2) and one varint field (tag = n << 3).
    const varint = (v: number): number[] => {
      const out: number[] = [];
      for (; v >= 0x80; v >>>= 7) out.push((v & 0x7f) | 0x80);
      return [...out, v];
    };
    const field = (n: number, value: Buffer | string): Buffer => {
      const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value);
      return Buffer.concat([Buffer.from([(n << 3) | 2, ...varint(bytes.length)]), bytes]);
    };
    const body = (await pcrBody(id, p256, { name: 'pb' })) as { spec: Record<string, string> };
    const stub = Buffer.from(body.spec.stubPKCS10Request ?? '', 'base64');
    const strings = ['signerName', 'podName', 'podUID', 'serviceAccountName', 'serviceAccountUID', 'nodeName', 'nodeUID'];
    const spec = Buffer.concat([...strings.map((f, i) => field(i + 1, body.spec[f] ?? '')), Buffer.from([8 << 3, ...varint(7200)]), field(12, stub)]);
    const object = Buffer.concat([field(1, field(1, 'pb')), field(2, spec)]);
    const typeMeta = Buffer.concat([field(1, `${G}/v1`), field(2, 'PodCertificateRequest')]);
    const envelope = Buffer.concat([Buffer.from('k8s\0', 'latin1'), field(1, typeMeta), field(2, object)]);
    const res = await raw(srv, 'POST', pcrPath('v1', NS), { body: envelope, contentType: 'application/vnd.kubernetes.protobuf' });
    expect(res.status).toBe(201);
    expect(res.json.spec).toEqual({ ...body.spec, maxExpirationSeconds: 7200 });
  });

  it('drops the v1beta1-only fields sent to v1 (Strict field validation refuses them)', async () => {
    const body = await pcrBody(id, p256, { name: 'v1-extra', legacy: true });
    const strict = await post('v1', body, '?fieldValidation=Strict');
    expect([strict.status, strict.json.message]).toEqual([400, expect.stringMatching(/unknown field "spec.pkixPublicKey"/)]);
    const res = await post('v1', body);
    expect(res.status).toBe(201);
    expect(Object.keys(res.json.spec)).not.toContain('pkixPublicKey');
  });

  it('refuses conditional-less updates and any change of spec', async () => {
    const created = (await post('v1', await pcrBody(id, p256, { name: 'immutable' }))).json;
    const noRv = { ...created, metadata: { name: 'immutable', namespace: NS } };
    expect((await raw(srv, 'PUT', pcrPath('v1', NS, 'immutable'), { body: noRv })).status).toBe(422);
    const changed = await raw(srv, 'PUT', pcrPath('v1', NS, 'immutable'), { body: { ...created, spec: { ...created.spec, podName: 'other' } } });
    expect([changed.status, causes(changed)]).toEqual([422, ['spec: Invalid value: field is immutable']]);
    const patched = await raw(srv, 'PATCH', pcrPath('v1', NS, 'immutable'), {
      body: { spec: { maxExpirationSeconds: 3600 } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(422);
    // Status written through the main resource is dropped, as upstream.
    const statusViaMain = await raw(srv, 'PUT', pcrPath('v1', NS, 'immutable'), {
      body: { ...created, status: { conditions: [{ type: 'Denied', status: 'True', reason: 'X', message: '', lastTransitionTime: created.metadata.creationTimestamp }] } },
    });
    expect([statusViaMain.status, statusViaMain.json.status]).toEqual([200, {}]);
  });

  it('answers a []byte field that is not base64 with the decoder 400', async () => {
    const res = await post('v1', await pcrBody(id, p256, { name: 'bad-b64', spec: { stubPKCS10Request: 'not base64!' } }));
    expect([res.status, res.json.message]).toEqual([400, 'PodCertificateRequest in version "v1" cannot be handled as a PodCertificateRequest: illegal base64 data at input byte 3']);
  });
});

describe('create validation (upstream rules and texts)', () => {
  it('defaults maxExpirationSeconds to 86400 and bounds it per signer', async () => {
    const range = (max: number): string => `must be in the range [3600, ${max}]`;
    expect(await invalid(await pcrBody(id, p256, { name: 'short', maxExpirationSeconds: 3599 }))).toEqual([`spec.maxExpirationSeconds: Invalid value: 3599: ${range(7862400)}`]);
    expect(await invalid(await pcrBody(id, p256, { name: 'long', maxExpirationSeconds: 7862401 }))).toEqual([`spec.maxExpirationSeconds: Invalid value: 7862401: ${range(7862400)}`]);
    const k8s = { signerName: 'kubernetes.io/kube-apiserver-client-pod' };
    expect(await invalid(await pcrBody(id, p256, { name: 'k8s-long', maxExpirationSeconds: 86401, ...k8s }))).toEqual([`spec.maxExpirationSeconds: Invalid value: 86401: ${range(86400)}`]);
    expect((await post('v1', await pcrBody(id, p256, { name: 'k8s-day', maxExpirationSeconds: 86400, ...k8s }))).status).toBe(201);
    expect((await post('v1', await pcrBody(id, p256, { name: 'ninety-one-days', maxExpirationSeconds: 7862400 }))).status).toBe(201);
  });

  it('still checks the key when maxExpirationSeconds is out of range (upstream stops only when it is unset)', async () => {
    expect(await invalid(await pcrBody(id, testKey('RSA2048'), { name: 'short-rsa-2048', maxExpirationSeconds: 60 }))).toEqual([
      'spec.maxExpirationSeconds: Invalid value: 60: must be in the range [3600, 7862400]',
      'spec.stubPKCS10Request: Invalid value: "2048-bit modulus": RSA keys must have modulus size 3072 or 4096',
    ]);
  });

  it('requires who the request is for', async () => {
    const body = await pcrBody(id, p256, {
      name: 'nobody',
      spec: { podName: '', podUID: '', serviceAccountName: 'Bad_Name', serviceAccountUID: 'x'.repeat(129), nodeName: '', nodeUID: '', signerName: 'nodomain' },
    });
    expect(await invalid(body)).toEqual([
      `spec.signerName: Invalid value: "nodomain": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
      'spec.podName: Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
      'spec.podUID: Invalid value: "": must not be empty',
      expect.stringMatching(/^spec\.serviceAccountName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/),
      'spec.serviceAccountUID: Too long: may not be more than 128 bytes',
      expect.stringMatching(/^spec\.nodeName: Invalid value: "": a lowercase RFC 1123 subdomain/),
      'spec.nodeUID: Invalid value: "": must not be empty',
    ]);
  });

  it('checks unverifiedUserAnnotations as annotations (qualified-name keys)', async () => {
    const ok = await post('v1', await pcrBody(id, p256, { name: 'annotated', spec: { unverifiedUserAnnotations: { 'example.com/team': 'payments' } } }));
    expect([ok.status, ok.json.spec.unverifiedUserAnnotations]).toEqual([201, { 'example.com/team': 'payments' }]);
    const bad = await invalid(await pcrBody(id, p256, { name: 'bad-annotation', spec: { unverifiedUserAnnotations: { 'not a key': 'x' } } }));
    expect(bad).toEqual([expect.stringMatching(/^spec\.unverifiedUserAnnotations: Invalid value: "not a key": name part must consist of alphanumeric characters/)]);
  });

  it('takes each supported key type and refuses the others', async () => {
    for (const kind of ['ECDSAP384', 'ECDSAP521', 'ED25519', 'RSA3072'] as const) {
      const res = await post('v1', await pcrBody(id, testKey(kind), { name: `key-${kind.toLowerCase()}` }));
      expect([kind, res.status]).toEqual([kind, 201]);
    }
    expect(await invalid(await pcrBody(id, testKey('RSA2048'), { name: 'rsa-2048' }))).toEqual([
      'spec.stubPKCS10Request: Invalid value: "2048-bit modulus": RSA keys must have modulus size 3072 or 4096',
    ]);
  });

  it('verifies the stub request: DER PKCS#10, signed by its own key', async () => {
    expect(await invalid(await pcrBody(id, p256, { name: 'no-stub', spec: { stubPKCS10Request: undefined } }))).toEqual([
      'spec.stubPKCS10Request: Required value: must be set',
    ]);
    const garbage = await invalid(await pcrBody(id, p256, { name: 'garbage', spec: { stubPKCS10Request: Buffer.from('not a request').toString('base64') } }));
    expect(garbage).toEqual([expect.stringMatching(/^spec\.stubPKCS10Request: Invalid value: must be a valid PKCS#10 certificate signing request signed by the subject key: /)]);
    const good = (await pcrBody(id, p256, { name: 'tampered' })) as { spec: { stubPKCS10Request: string } };
    const der = Buffer.from(good.spec.stubPKCS10Request, 'base64');
    der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 0xff;
    good.spec.stubPKCS10Request = der.toString('base64');
    expect(await invalid(good)).toEqual([
      'spec.stubPKCS10Request: Invalid value: must be a valid PKCS#10 certificate signing request signed by the subject key: x509: ECDSA verification failure',
    ]);
  });

  it('checks the deprecated v1beta1 key pair: key type, same key as the stub, proof of possession over the pod UID', async () => {
    const other = testKey('ECDSAP256');
    const mismatch = await pcrBody(id, p256, { name: 'mismatch', version: 'v1beta1', legacy: true, spec: { pkixPublicKey: other.spki.toString('base64') } });
    expect(await invalid(mismatch, 'v1beta1')).toEqual(['spec.pkixPublicKey: Invalid value: must be the public key of spec.stubPKCS10Request']);
    const wrongUid = await pcrBody({ ...id, podUID: 'another-uid' }, p256, { name: 'wrong-pop', version: 'v1beta1', legacy: true, spec: { podUID: id.podUID } });
    expect(await invalid(wrongUid, 'v1beta1')).toEqual(['spec.proofOfPossession: Invalid value: could not verify proof-of-possession signature']);
    const p224 = await pcrBody(id, p256, { name: 'p224', version: 'v1beta1', legacy: true, spec: { pkixPublicKey: testKey('ECDSAP224').spki.toString('base64') } });
    expect(await invalid(p224, 'v1beta1')).toEqual(['spec.pkixPublicKey: Invalid value: "curve P-224": elliptic public keys must use curve P256 or P384']);
    const half = await pcrBody(id, p256, { name: 'half', version: 'v1beta1', legacy: true, spec: { proofOfPossession: undefined } });
    expect(await invalid(half, 'v1beta1')).toEqual(['spec.proofOfPossession: Required value: must be set together with pkixPublicKey']);
    for (const kind of ['ED25519', 'RSA3072', 'ECDSAP384'] as const) {
      const res = await post('v1beta1', await pcrBody(id, testKey(kind), { name: `pop-${kind.toLowerCase()}`, version: 'v1beta1', legacy: true }));
      expect([kind, res.status]).toEqual([kind, 201]);
    }
  });
});

describe('field selectors and watch', () => {
  const names = async (selector: string, version = 'v1'): Promise<string[]> => {
    const res = await raw(srv, 'GET', `${pcrPath(version, NS)}?fieldSelector=${encodeURIComponent(selector)}`);
    expect(res.status).toBe(200);
    return (res.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort();
  };

  it('filters on spec.signerName, spec.podName and spec.nodeName, and nothing else', async () => {
    const other = await podOnNode(srv, NS, 'db', 'pcr-node-2', ['other.example/signer']);
    expect((await post('v1', await pcrBody(other, p256, { name: 'db-cert', signerName: 'other.example/signer' }))).status).toBe(201);
    expect(await names('spec.signerName=other.example/signer')).toEqual(['db-cert']);
    expect(await names('spec.podName=db', 'v1beta1')).toEqual(['db-cert']);
    expect(await names('spec.nodeName=pcr-node-2')).toEqual(['db-cert']);
    expect(await names('spec.nodeName=pcr-node')).toContain('legacy');
    expect(await names('spec.nodeName!=pcr-node')).toEqual(['db-cert']);
    const bad = await raw(srv, 'GET', `${pcrPath('v1', NS)}?fieldSelector=spec.podUID%3Dx`);
    expect(bad.status).toBe(400);
  });

  it('watches with a selector, in either version', async () => {
    const list = await raw(srv, 'GET', pcrPath('v1', NS));
    const rv = list.json.metadata.resourceVersion as string;
    const selector = encodeURIComponent('spec.nodeName=pcr-node-3');
    const third = await podOnNode(srv, NS, 'cache', 'pcr-node-3', ['example.com/workload']);
    expect((await post('v1beta1', await pcrBody(third, p256, { name: 'cache-cert', version: 'v1beta1', legacy: true }))).status).toBe(201);
    const watched = await raw(srv, 'GET', `${pcrPath('v1', NS)}?watch=1&resourceVersion=${rv}&fieldSelector=${selector}&timeoutSeconds=1`);
    const events = watched.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: { apiVersion: string; metadata: { name: string }; spec: Record<string, unknown> } });
    expect(events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name])).toEqual([['ADDED', `${G}/v1`, 'cache-cert']]);
    expect(Object.keys(events[0]?.object.spec ?? {})).not.toContain('pkixPublicKey');
  });
});

describe('kubectl', () => {
  it('gets, explains and deletes requests', async () => {
    const got = await kubectlWith(srv, ['get', 'podcertificaterequests', '-n', NS, 'legacy', 'db-cert']);
    expect([got.code, got.stderr]).toEqual([0, '']);
    const rows = got.stdout.trim().split('\n').map((l) => l.split(/\s{2,}/));
    expect(rows[0]).toEqual(['NAME', 'SIGNERNAME', 'POD', 'SERVICEACCOUNT', 'STATE', 'AGE']);
    expect(rows.slice(1).map((r) => r.slice(0, 5))).toEqual([
      ['legacy', 'example.com/workload', 'web', 'workload', 'Pending'],
      ['db-cert', 'other.example/signer', 'db', 'workload', 'Pending'],
    ]);
    const wide = await kubectlWith(srv, ['get', 'podcertificaterequests.v1beta1.certificates.k8s.io', '-n', NS, 'db-cert', '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]).toMatch(/NODE$/);
    expect(wide.stdout).toContain('pcr-node-2');
    const explained = await kubectlWith(srv, ['explain', 'podcertificaterequests.spec']);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('stubPKCS10Request');
    expect(explained.stdout).not.toContain('pkixPublicKey');
    const beta = await kubectlWith(srv, ['explain', 'podcertificaterequests.spec', '--api-version', `${G}/v1beta1`]);
    expect(beta.stdout).toContain('pkixPublicKey');
    const deleted = await kubectlWith(srv, ['delete', 'podcertificaterequest', '-n', NS, 'db-cert']);
    expect([deleted.code, deleted.stdout.trim()]).toEqual([0, 'podcertificaterequest.certificates.k8s.io "db-cert" deleted']);
  });
});
