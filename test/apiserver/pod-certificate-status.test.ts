/**
 * PodCertificateRequest /status on the full embedded server: the Issued, Denied and Failed
 * transitions with upstream's rules and texts, checked against real leaf certificates from a real CA,
 * and who may write status (`sign` on the signer, exact or `<domain>/*`).
 */
import type { CaMaterial } from '../../src/pki/signer.js';
import { rawAs, type Acting, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { G, leafFor, pcrBody, pcrPath, podOnNode, rfc3339, testCa, testKey, wholeSecondNow, type PodIdentity, type TestKey } from '../helpers/pod-certificates.js';

let srv: TestServer;
let id: PodIdentity;
let ca: CaMaterial;
let key: TestKey;
const NS = 'pcr-status';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
let n = 0;

type Who = Acting;
const as = (who: Who, method: string, path: string, body?: unknown): Promise<RawResponse> => rawAs(srv, who, method, path, body);
const causes = (res: RawResponse): string[] => (res.json.details?.causes ?? []).map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);

/** A request as the server answers it. */
type Stored = RawResponse['json'];

/** A fresh pending request (v1) for `key`, as stored. */
async function pending(opts: { maxExpirationSeconds?: number; signerName?: string } = {}): Promise<Stored> {
  const res = await as('admin', 'POST', pcrPath('v1', NS), await pcrBody(id, key, { name: `req-${++n}`, ...opts }));
  expect(res.status).toBe(201);
  return res.json;
}

const condition = (type: string, reason = 'Because', status = 'True'): Record<string, unknown> => ({
  type,
  status,
  reason,
  message: `${type} by the test signer`,
  lastTransitionTime: rfc3339(new Date()),
});

function writeStatus(who: Who, obj: Stored, status: Record<string, unknown>): Promise<RawResponse> {
  const version = String(obj.apiVersion).split('/')[1] ?? 'v1';
  return as(who, 'PUT', `${pcrPath(version, NS, obj.metadata.name)}/status`, { ...obj, status });
}

/** An Issued status for `obj`: a leaf for `leafKey` valid from now for `lifetime`, beginRefreshAt at half of it. */
async function issued(leafKey: TestKey, lifetime = 3600 * 4, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const nb = wholeSecondNow();
  const chain = (await leafFor(ca, leafKey, nb, lifetime)) + ca.certPem;
  return {
    conditions: [condition('Issued', 'Issued')],
    certificateChain: chain,
    notBefore: rfc3339(nb),
    beginRefreshAt: rfc3339(new Date(nb.getTime() + (lifetime / 2) * 1000)),
    notAfter: rfc3339(new Date(nb.getTime() + lifetime * 1000)),
    ...extra,
  };
}

async function grant(user: string, rules: unknown[]): Promise<void> {
  const name = `pcr-${user}`;
  const role = await as('admin', 'POST', `${RBAC}/clusterroles`, { metadata: { name }, rules });
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name };
  const binding = await as('admin', 'POST', `${RBAC}/clusterrolebindings`, { metadata: { name }, roleRef, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }] });
  expect([role.status, binding.status]).toEqual([201, 201]);
}

beforeAll(async () => {
  srv = await startTestServer();
  id = await podOnNode(srv, NS, 'web', 'status-node', ['example.com/workload']);
  ca = await testCa();
  key = testKey('ECDSAP256');
}, 60_000);

afterAll(async () => {
  await srv.close();
});

describe('the Issued transition', () => {
  it('accepts a chain for the requested key with consistent times, then freezes status', async () => {
    const req = await pending();
    const status = await issued(key);
    const res = await writeStatus('admin', req, status);
    expect(res.status).toBe(200);
    expect(res.json.status).toEqual(status);
    const again = await writeStatus('admin', res.json, { ...status, conditions: [condition('Failed')], certificateChain: undefined });
    expect([again.status, causes(again)]).toEqual([422, ['status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed']]);
    const spec = await writeStatus('admin', { ...res.json, spec: { ...res.json.spec, podName: 'x' } }, res.json.status);
    expect([spec.status, spec.json.spec.podName]).toEqual([200, 'web']);
  });

  it('takes Ed25519 and RSA leaves for requests of those keys', async () => {
    for (const kind of ['ED25519', 'RSA3072'] as const) {
      const k = testKey(kind);
      const created = await as('admin', 'POST', pcrPath('v1beta1', NS), await pcrBody(id, k, { name: `req-${kind.toLowerCase()}`, version: 'v1beta1', legacy: true }));
      expect(created.status).toBe(201);
      const res = await writeStatus('admin', created.json, await issued(k));
      expect([kind, res.status]).toEqual([kind, 200]);
    }
  });

  it('refuses a leaf for another key, and a chain that is not one', async () => {
    const req = await pending();
    const other = await issued(testKey('ECDSAP256'));
    const res = await writeStatus('admin', req, other);
    expect(res.status).toBe(422);
    expect(causes(res)).toEqual([expect.stringMatching(/^status\.certificateChain: Invalid value: ".*": leaf certificate was not issued to the requested public key$/s)]);
    const notPem = await writeStatus('admin', req, await issued(key, 7200, { certificateChain: 'no pem here' }));
    expect(causes(notPem)).toEqual(['status.certificateChain: Invalid value: "no pem here": issued certificate chain must contain at least one certificate']);
    const keyBlock = key.privateKeyPem;
    const wrongType = await writeStatus('admin', req, await issued(key, 7200, { certificateChain: keyBlock }));
    expect(causes(wrongType)).toEqual([expect.stringMatching(/issued certificate chain must consist entirely of CERTIFICATE PEM blocks$/)]);
    const good = (await issued(key)) as { certificateChain: string };
    const withKey = await writeStatus('admin', req, { ...good, certificateChain: good.certificateChain + keyBlock });
    expect(causes(withKey)).toEqual([expect.stringMatching(/issued certificate chain must consist entirely of CERTFICATE PEM blocks$/)]);
  });

  it('needs the three times, consistent with the leaf and the clock', async () => {
    const req = await pending();
    const status = await issued(key, 7200);
    const missing = await writeStatus('admin', req, { ...status, notBefore: undefined, beginRefreshAt: undefined });
    expect(causes(missing)).toEqual([
      'status.notBefore: Required value: must be present and consistent with the issued certificate',
      'status.beginRefreshAt: Required value: must be present and in the range [notbefore+10min, notafter-10min]',
    ]);
    const nb = Date.parse(status.notBefore as string);
    const shifted = rfc3339(new Date(nb - 1000));
    const wrongNb = await writeStatus('admin', req, { ...status, notBefore: shifted });
    expect(causes(wrongNb)).toEqual([`status.notBefore: Invalid value: ${shifted.replace('T', ' ').replace('Z', ' +0000 UTC')}: must be set to the NotBefore time encoded in the leaf certificate`]);
    const wrongNa = await writeStatus('admin', req, { ...status, notAfter: rfc3339(new Date(nb + 3600_000)) });
    expect(causes(wrongNa)).toEqual([expect.stringMatching(/^status\.notAfter: Invalid value: .*: must be set to the NotAfter time encoded in the leaf certificate$/)]);
    const early = await writeStatus('admin', req, { ...status, beginRefreshAt: rfc3339(new Date(nb + 599_000)) });
    expect(causes(early)).toEqual([expect.stringMatching(/^status\.beginRefreshAt: Invalid value: .*: must be at least 10 minutes after status\.notBefore$/)]);
    const late = await writeStatus('admin', req, { ...status, beginRefreshAt: rfc3339(new Date(nb + 7200_000 - 599_000)) });
    expect(causes(late)).toEqual([expect.stringMatching(/^status\.beginRefreshAt: Invalid value: .*: must be at least 10 minutes before status\.notAfter$/)]);

    const old = new Date(wholeSecondNow().getTime() - 10 * 60_000);
    const stale = (await leafFor(ca, key, old, 7200)) as string;
    const staleStatus = { ...status, certificateChain: stale, notBefore: rfc3339(old), notAfter: rfc3339(new Date(old.getTime() + 7200_000)), beginRefreshAt: rfc3339(new Date(old.getTime() + 3600_000)) };
    const res = await writeStatus('admin', req, staleStatus);
    expect(causes(res)).toEqual([expect.stringMatching(/^status\.notBefore: Invalid value: .*: must be set to within 5 minutes of kube-apiserver's current time$/)]);
  });

  it('bounds the leaf lifetime by 1 hour and spec.maxExpirationSeconds', async () => {
    const req = await pending({ maxExpirationSeconds: 7200 });
    const tooShort = await writeStatus('admin', req, await issued(key, 1800, { beginRefreshAt: undefined }).then((s) => ({ ...s, beginRefreshAt: s.notBefore })));
    expect(causes(tooShort)).toEqual(['status.certificateChain: Invalid value: 30m0s: leaf certificate lifetime must be >= 1 hour']);
    const tooLong = await writeStatus('admin', req, await issued(key, 7201));
    expect(causes(tooLong)).toEqual(['status.certificateChain: Invalid value: 2h0m1s: leaf certificate lifetime must be <= spec.maxExpirationSeconds (7200)']);
    expect((await writeStatus('admin', req, await issued(key, 7200))).status).toBe(200);
  });
});

describe('Denied, Failed and the condition rules', () => {
  it('denies with UnsupportedKeyType and carries nothing but conditions', async () => {
    const req = await pending();
    const withChain = await writeStatus('admin', req, { ...(await issued(key)), conditions: [condition('Denied', 'UnsupportedKeyType')] });
    expect(causes(withChain)).toEqual(['status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest']);
    const denied = await writeStatus('admin', req, { conditions: [condition('Denied', 'UnsupportedKeyType')] });
    expect([denied.status, denied.json.status.conditions[0].reason]).toEqual([200, 'UnsupportedKeyType']);
    const reissue = await writeStatus('admin', denied.json, await issued(key));
    expect(reissue.status).toBe(422);
  });

  it('takes a Failed condition', async () => {
    const req = await pending();
    expect((await writeStatus('admin', req, { conditions: [condition('Failed', 'SignerUnavailable')] })).status).toBe(200);
  });

  it('allows one terminal condition, status True, with a reason and a time', async () => {
    const req = await pending();
    const two = await writeStatus('admin', req, { conditions: [condition('Denied'), condition('Failed')] });
    expect(causes(two)).toEqual(['status.conditions.[1].type: Invalid value: "Failed": There may be at most one condition with type "Issued", "Denied", or "Failed"']);
    const falseStatus = await writeStatus('admin', req, { conditions: [condition('Denied', 'No', 'False')] });
    expect(causes(falseStatus)).toEqual(['status.conditions.[0].status: Unsupported value: "False": supported values: "True"']);
    const other = await writeStatus('admin', req, { conditions: [condition('Ready')] });
    expect(causes(other)).toEqual(['status.conditions.[0].type: Unsupported value: "Ready": supported values: "Issued", "Denied", "Failed"']);
    const noReason = await writeStatus('admin', req, { conditions: [{ ...condition('Denied'), reason: 'not ok', lastTransitionTime: undefined }] });
    expect(causes(noReason)).toEqual([
      'status.conditions[0].lastTransitionTime: Required value: must be set',
      "status.conditions[0].reason: Invalid value: \"not ok\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
    ]);
    const nothing = await writeStatus('admin', req, { certificateChain: ca.certPem });
    expect(causes(nothing)).toEqual(['status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"']);
  });
});

describe('who may write status', () => {
  beforeAll(async () => {
    const statusRule = { apiGroups: [G], resources: ['podcertificaterequests/status'], verbs: ['update'] };
    await grant('no-sign', [statusRule]);
    await grant('signer', [statusRule, { apiGroups: [G], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['sign'] }]);
    await grant('other-signer', [statusRule, { apiGroups: [G], resources: ['signers'], resourceNames: ['other.example/signer'], verbs: ['sign'] }]);
  });

  it('needs sign on the signer, by name or domain wildcard', async () => {
    const req = await pending();
    const refused = await writeStatus({ user: 'no-sign' }, req, { conditions: [condition('Denied')] });
    expect([refused.status, refused.json.reason, causes(refused)]).toEqual([
      422,
      'Invalid',
      ['spec.signerName: Forbidden: User "no-sign" is not permitted to "sign" for signer "example.com/workload"'],
    ]);
    expect((await writeStatus({ user: 'other-signer' }, req, { conditions: [condition('Denied')] })).status).toBe(422);
    expect((await writeStatus({ user: 'signer' }, req, await issued(key))).status).toBe(200);
  });

  it('keeps users without a grant, and nodes, away from status', async () => {
    const req = await pending();
    const stranger = await writeStatus({ user: 'stranger', groups: ['system:authenticated'] }, req, { conditions: [condition('Denied')] });
    expect(stranger.status).toBe(403);
    const node = await writeStatus({ user: 'system:node:status-node', groups: ['system:nodes'] }, req, await issued(key));
    expect(node.status).toBe(403);
  });
});
