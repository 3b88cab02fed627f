/**
 * The CSR API over real HTTPS: client-node's CertificatesV1Api and raw requests against the
 * embedded server with the CSR strategy registered. Every rejected write is followed by a read
 * proving the stored object did not change.
 */
import { jest } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { b64, certificatePem, csrPem } from './helpers.js';
import { startCsrServer, type CsrTestServer } from './server.js';

const BASE = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const MERGE = 'application/merge-patch+json';

let srv: CsrTestServer;
let PEM: string;
let alice: k8s.CertificatesV1Api;
let approver: k8s.CertificatesV1Api;
let signer: k8s.CertificatesV1Api;

beforeAll(async () => {
  srv = await startCsrServer();
  PEM = await csrPem();
  alice = srv.kubeConfig('alice').makeApiClient(k8s.CertificatesV1Api);
  approver = srv.kubeConfig('approver').makeApiClient(k8s.CertificatesV1Api);
  signer = srv.kubeConfig('signer').makeApiClient(k8s.CertificatesV1Api);
});

afterAll(async () => {
  await srv.close();
});

const body = (name: string, signerName = 'example.com/my-signer', extra: Partial<k8s.V1CertificateSigningRequestSpec> = {}) => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name },
  spec: { request: b64(PEM), signerName, usages: ['digital signature', 'client auth'], ...extra },
});

async function apiError(p: Promise<unknown>): Promise<{ code: number; status: { message?: string } }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof k8s.ApiException) return { code: err.code, status: JSON.parse(err.body as string) };
    throw err;
  }
  throw new Error('expected the request to fail');
}

/** The stored object, read raw. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON of a CSR
const stored = async (name: string): Promise<any> => (await srv.request('admin', 'GET', `${BASE}/${name}`)).json;

describe('create', () => {
  it('stores the requester identity and an empty status', async () => {
    const created = await alice.createCertificateSigningRequest({
      body: { ...body('c1', 'example.com/my-signer', { username: 'mallory', groups: ['system:masters'] }), status: { conditions: [{ type: 'Approved', status: 'True' }] } },
    });
    expect(created.spec.username).toBe('alice');
    expect(created.spec.uid).toBe('uid-alice');
    expect(created.spec.groups).toEqual(['devs', 'system:authenticated']);
    expect(created.status?.conditions ?? []).toEqual([]);
    const raw = await stored('c1');
    expect(raw.spec.request).toBe(b64(PEM));
    expect(raw.status).toEqual({});
  });

  it('answers 422 with upstream messages and stores nothing', async () => {
    const { status, json: res } = await srv.request('alice', 'POST', BASE, { body: body('bad1', 'example.com/my-signer', { expirationSeconds: 599 }) });
    expect(status).toBe(422);
    expect(res.reason).toBe('Invalid');
    expect(res.message).toBe(
      'CertificateSigningRequest.certificates.k8s.io "bad1" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
    );
    expect(res.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)', field: 'spec.expirationSeconds' },
    ]);
    const legacy = await srv.request('alice', 'POST', BASE, { body: body('bad2', 'kubernetes.io/legacy-unknown') });
    expect(legacy.json.message).toBe(
      'CertificateSigningRequest.certificates.k8s.io "bad2" is invalid: spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
    );
    expect((await srv.request('admin', 'GET', `${BASE}/bad1`)).status).toBe(404);
  });

  it('answers 400 for invalid base64', async () => {
    const res = await srv.request('alice', 'POST', BASE, { body: { ...body('b64'), spec: { ...body('b64').spec, request: 'LS0t*' } } });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe(
      'CertificateSigningRequest in version "v1" cannot be handled as a CertificateSigningRequest: illegal base64 data at input byte 4',
    );
  });

  it('forbids system:masters client certificates from kube-apiserver-client', async () => {
    const masters = await csrPem({ commonName: 'root', organizations: ['system:masters'] });
    const res = await srv.request('admin', 'POST', BASE, {
      body: { ...body('m1'), spec: { ...body('m1').spec, request: b64(masters), signerName: 'kubernetes.io/kube-apiserver-client' } },
    });
    expect(res.status).toBe(403);
    expect(res.json.message).toBe(
      'certificatesigningrequests.certificates.k8s.io "m1" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
    expect((await srv.request('admin', 'GET', `${BASE}/m1`)).status).toBe(404);
  });
});

describe('list and watch by spec.signerName', () => {
  it('filters list and watch', async () => {
    await alice.createCertificateSigningRequest({ body: body('s-a', 'a.example.com/one') });
    await alice.createCertificateSigningRequest({ body: body('s-b', 'b.example.com/two') });
    const list = await alice.listCertificateSigningRequest({ fieldSelector: 'spec.signerName=a.example.com/one' });
    expect(list.items.map((i) => i.metadata?.name)).toEqual(['s-a']);
    const not = await alice.listCertificateSigningRequest({ fieldSelector: 'spec.signerName!=a.example.com/one' });
    expect(not.items.map((i) => i.metadata?.name)).not.toContain('s-a');
    expect(not.items.map((i) => i.metadata?.name)).toContain('s-b');
    const bad = await srv.request('alice', 'GET', `${BASE}?fieldSelector=spec.username%3Dalice`);
    expect(bad.status).toBe(400);

    const events: string[] = [];
    let sawB2: () => void = () => undefined;
    const seen = new Promise<void>((resolve) => {
      sawB2 = resolve;
    });
    const watch = await new k8s.Watch(srv.kubeConfig('alice')).watch(
      BASE,
      { fieldSelector: 'spec.signerName=b.example.com/two', resourceVersion: list.metadata?.resourceVersion },
      (type: string, obj: k8s.V1CertificateSigningRequest) => {
        events.push(`${type} ${obj.metadata?.name}`);
        if (obj.metadata?.name === 's-b2') sawB2();
      },
      () => undefined,
    );
    await alice.createCertificateSigningRequest({ body: body('s-a2', 'a.example.com/one') });
    await alice.createCertificateSigningRequest({ body: body('s-b2', 'b.example.com/two') });
    await seen;
    watch.abort();
    expect(events).toEqual(['ADDED s-b2']);
  });
});

describe('approval subresource', () => {
  it('approves through replaceCertificateSigningRequestApproval with signer permission', async () => {
    await alice.createCertificateSigningRequest({ body: body('ap1') });
    const csr = await approver.readCertificateSigningRequest({ name: 'ap1' });
    csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' } as k8s.V1CertificateSigningRequestCondition] };
    const approved = await approver.replaceCertificateSigningRequestApproval({ name: 'ap1', body: csr });
    const [c] = approved.status?.conditions ?? [];
    expect(c).toMatchObject({ type: 'Approved', status: 'True', reason: 'Test' });
    expect(c?.lastUpdateTime).toBeInstanceOf(Date);
    expect(c?.lastTransitionTime).toBeInstanceOf(Date);
  });

  it('rejects callers without approve on the signer and leaves the object unchanged', async () => {
    await alice.createCertificateSigningRequest({ body: body('ap2') });
    const before = await stored('ap2');
    const csr = await alice.readCertificateSigningRequest({ name: 'ap2' });
    csr.status = { conditions: [{ type: 'Approved', status: 'True' } as k8s.V1CertificateSigningRequestCondition] };
    const err = await apiError(alice.replaceCertificateSigningRequestApproval({ name: 'ap2', body: csr }));
    expect(err.code).toBe(403);
    expect(err.status.message).toBe(
      'certificatesigningrequests.certificates.k8s.io "ap2" is forbidden: user not permitted to approve requests with signerName "example.com/my-signer"',
    );
    expect(await stored('ap2')).toEqual(before);
  });

  it('rejects Approved with Denied, and removal, with 422 and no change', async () => {
    await alice.createCertificateSigningRequest({ body: body('ap3') });
    const path = `${BASE}/ap3/approval`;
    const ok = await srv.request('approver', 'PATCH', path, { body: { status: { conditions: [{ type: 'Denied', status: 'True' }] } }, contentType: MERGE });
    expect(ok.status).toBe(200);
    const before = await stored('ap3');
    const both = await srv.request(
      'approver',
      'PATCH',
      path,
      { body: { status: { conditions: [{ type: 'Denied', status: 'True' }, { type: 'Approved', status: 'True' }] } }, contentType: MERGE },
    );
    expect(both.status).toBe(422);
    expect(both.json.message).toBe(
      'CertificateSigningRequest.certificates.k8s.io "ap3" is invalid: status.conditions: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive',
    );
    const removed = await srv.request('approver', 'PATCH', path, { body: { status: { conditions: [] } }, contentType: MERGE });
    expect(removed.status).toBe(422);
    expect(removed.json.message).toBe(
      'CertificateSigningRequest.certificates.k8s.io "ap3" is invalid: status.conditions: Forbidden: updates may not remove a condition of type "Denied"',
    );
    expect(await stored('ap3')).toEqual(before);
  });
});

describe('status subresource and main resource', () => {
  it('lets a signer set the certificate once; others are refused; nothing changes on refusal', async () => {
    await alice.createCertificateSigningRequest({ body: body('st1') });
    const cert = b64(await certificatePem());
    const csr = await signer.readCertificateSigningRequest({ name: 'st1' });
    csr.status = { certificate: cert };

    const denied = await apiError(alice.replaceCertificateSigningRequestStatus({ name: 'st1', body: csr }));
    expect(denied.code).toBe(403);
    expect(denied.status.message).toBe(
      'certificatesigningrequests.certificates.k8s.io "st1" is forbidden: user not permitted to sign requests with signerName "example.com/my-signer"',
    );

    const issued = await signer.replaceCertificateSigningRequestStatus({ name: 'st1', body: csr });
    expect(issued.status?.certificate).toBe(cert);
    const before = await stored('st1');

    const other = b64(await certificatePem('other'));
    const again = await srv.request('signer', 'PATCH', `${BASE}/st1/status`, { body: { status: { certificate: other } }, contentType: MERGE });
    expect(again.status).toBe(422);
    expect(again.json.message).toBe(
      'CertificateSigningRequest.certificates.k8s.io "st1" is invalid: status.certificate: Forbidden: updates may not modify existing certificate content',
    );
    const approve = await srv.request('signer', 'PATCH', `${BASE}/st1/status`, { body: { status: { conditions: [{ type: 'Approved', status: 'True' }] } }, contentType: MERGE });
    expect(approve.status).toBe(422);
    expect(approve.json.message).toContain('updates may not add a condition of type "Approved"');
    expect(await stored('st1')).toEqual(before);
  });

  // The write reads each []byte field several times (decode check, canonical form, validation, the
  // sign admission check); they must share one decode of each text.
  it('decodes status.certificate and spec.request at most once per /status write', async () => {
    await alice.createCertificateSigningRequest({ body: body('st-once') });
    const cert = b64(await certificatePem('once'));
    const csr = await signer.readCertificateSigningRequest({ name: 'st-once' });
    csr.status = { certificate: cert };
    const request = csr.spec.request;
    const from = jest.spyOn(Buffer, 'from');
    let issued: k8s.V1CertificateSigningRequest;
    let calls: unknown[][];
    try {
      issued = await signer.replaceCertificateSigningRequestStatus({ name: 'st-once', body: csr });
    } finally {
      calls = [...from.mock.calls];
      from.mockRestore();
    }
    const decodes = (text: string): number => calls.filter((c) => c[0] === text && c[1] === 'base64').length;
    expect(issued.status?.certificate).toBe(cert);
    expect(decodes(cert)).toBe(1);
    expect(decodes(request)).toBeLessThanOrEqual(1);
  });

  it('rejects bad certificate content with 422', async () => {
    await alice.createCertificateSigningRequest({ body: body('st2') });
    const res = await srv.request('signer', 'PATCH', `${BASE}/st2/status`, { body: { status: { certificate: b64('-----BEGIN PRIVATE KEY-----\nAQID\n-----END PRIVATE KEY-----\n') } }, contentType: MERGE });
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(
      'CertificateSigningRequest.certificates.k8s.io "st2" is invalid: status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"',
    );
  });

  it('applies only metadata on the main resource', async () => {
    await alice.createCertificateSigningRequest({ body: body('m-1') });
    const before = await stored('m-1');
    const res = await srv.request(
      'admin',
      'PATCH',
      `${BASE}/m-1`,
      {
        body: { metadata: { labels: { team: 'x' } }, spec: { signerName: 'evil.io/x' }, status: { conditions: [{ type: 'Approved', status: 'True' }] } },
        contentType: MERGE,
      },
    );
    expect(res.status).toBe(200);
    expect(res.json.metadata.labels).toEqual({ team: 'x' });
    expect(res.json.spec).toEqual(before.spec);
    expect(res.json.status).toEqual(before.status);
  });

  it('prints the server-side table', async () => {
    await alice.createCertificateSigningRequest({ body: body('t-1', 'example.com/my-signer', { expirationSeconds: 3600 }) });
    const { json: res } = await srv.request('alice', 'GET', `${BASE}/t-1`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    expect(res.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition']);
    expect(res.rows[0].cells.slice(2)).toEqual(['example.com/my-signer', 'alice', '60m', 'Pending']);
  });
});
