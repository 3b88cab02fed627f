import type { KObject } from '../../api/meta.js';
import { ApiError } from '../http/errors.js';
import { b64, certificatePem, csrObject, csrPem, ctx, signerAuthorizer } from '../../../test/csr/helpers.js';
import { csrStrategy } from '../registry/certificates/csr.js';
import type { AdmissionOperation } from '../registry/generic/admission.js';
import type { RequestContext } from '../registry/generic/strategy.js';
import { admissionChain, DEFAULT_ON_PLUGINS } from './chain.js';

const chain = admissionChain(DEFAULT_ON_PLUGINS);

/** The default chain's verdict on a CSR write, as a promise (the chain throws what it can tell at once): `subresource` '' is the main resource. */
const write =
  (operation: AdmissionOperation, subresource: string) =>
  async (object: KObject, oldObject: KObject | undefined, c: RequestContext): Promise<void> =>
    chain.validate({ operation, info: csrStrategy.info, subresource, namespace: undefined, name: object.metadata?.name ?? '', object, oldObject, ctx: c });
const approve = write('UPDATE', 'approval');
const sign = write('UPDATE', 'status');
const create = (obj: KObject, c: RequestContext): Promise<void> => write('CREATE', '')(obj, undefined, c);
const updateMain = write('UPDATE', '');

async function rejection(p: Promise<void>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

function stored(pem: string, signerName = 'example.com/my-signer'): KObject {
  const obj = csrObject(pem, { signerName, name: 'node-csr' });
  csrStrategy.prepareForCreate?.(obj, ctx());
  return obj;
}

const withStatus = (obj: KObject, status: Record<string, unknown>): KObject => ({ ...structuredClone(obj), status });

describe('CertificateApproval (approval subresource)', () => {
  let old: KObject;
  beforeAll(async () => {
    old = stored(await csrPem());
  });
  const next = () => withStatus(old, { conditions: [{ type: 'Approved', status: 'True' }] });

  it('rejects without approve on the signer, with upstream message, after trying name then domain wildcard', async () => {
    const authorizer = signerAuthorizer(['sign example.com/my-signer', 'approve other.io/*']);
    const err = await rejection(approve(next(), old, ctx({ authorizer })));
    expect(err.code).toBe(403);
    expect(err.reason).toBe('Forbidden');
    expect(err.message).toBe(
      'certificatesigningrequests.certificates.k8s.io "node-csr" is forbidden: user not permitted to approve requests with signerName "example.com/my-signer"',
    );
    expect(err.toStatus().details).toEqual({ name: 'node-csr', group: 'certificates.k8s.io', kind: 'certificatesigningrequests' });
    expect(authorizer.calls.map((c) => [c.verb, c.apiGroup, c.resource, c.name, c.user.username])).toEqual([
      ['approve', 'certificates.k8s.io', 'signers', 'example.com/my-signer', 'alice'],
      ['approve', 'certificates.k8s.io', 'signers', 'example.com/*', 'alice'],
    ]);
  });

  it.each(['approve example.com/my-signer', 'approve example.com/*'])('allows with %s', async (grant) => {
    await expect(approve(next(), old, ctx({ grants: [grant] }))).resolves.toBeUndefined();
  });

  it('checks the stored signer name, not the submitted one', async () => {
    const sneaky = withStatus(old, {});
    sneaky.spec = { ...(sneaky.spec as object), signerName: 'evil.io/x' };
    await expect(approve(sneaky, old, ctx({ grants: ['approve example.com/*'] }))).resolves.toBeUndefined();
    await rejection(approve(sneaky, old, ctx({ grants: ['approve evil.io/x'] })));
  });

  it('treats authorizer errors as denial', async () => {
    const err = await rejection(approve(next(), old, ctx({ authorizer: signerAuthorizer(['approve example.com/*'], true) })));
    expect(err.code).toBe(403);
  });
});

describe('CertificateSigning (status subresource)', () => {
  let old: KObject;
  let cert: string;
  beforeAll(async () => {
    old = withStatus(stored(await csrPem()), { conditions: [{ type: 'Approved', status: 'True' }] });
    cert = b64(await certificatePem());
  });

  it('needs sign on the signer to change the certificate', async () => {
    const next = withStatus(old, { conditions: [{ type: 'Approved', status: 'True' }], certificate: cert });
    const err = await rejection(sign(next, old, ctx({ grants: ['approve example.com/*'] })));
    expect(err.message).toBe(
      'certificatesigningrequests.certificates.k8s.io "node-csr" is forbidden: user not permitted to sign requests with signerName "example.com/my-signer"',
    );
    await expect(sign(next, old, ctx({ grants: ['sign example.com/my-signer'] }))).resolves.toBeUndefined();
    await expect(sign(next, old, ctx({ grants: ['sign example.com/*'] }))).resolves.toBeUndefined();
  });

  it('does not check when the certificate bytes are unchanged (conditions only)', async () => {
    const authorizer = signerAuthorizer([]);
    const next = withStatus(old, { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }] });
    await expect(sign(next, old, ctx({ authorizer }))).resolves.toBeUndefined();
    expect(authorizer.calls).toEqual([]);
  });
});

describe('CertificateSubjectRestriction (create)', () => {
  it('rejects system:masters for kube-apiserver-client', async () => {
    const obj = stored(await csrPem({ commonName: 'admin', organizations: ['dev', 'system:masters'] }), 'kubernetes.io/kube-apiserver-client');
    const err = await rejection(create(obj, ctx()));
    expect(err.code).toBe(403);
    expect(err.message).toBe(
      'certificatesigningrequests.certificates.k8s.io "node-csr" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
  });

  it('allows system:masters with other signers and other groups with this one', async () => {
    const masters = await csrPem({ organizations: ['system:masters'] });
    await expect(create(stored(masters, 'example.com/x'), ctx())).resolves.toBeUndefined();
    await expect(create(stored(masters, 'kubernetes.io/kube-apiserver-client-kubelet'), ctx())).resolves.toBeUndefined();
    const devs = await csrPem({ organizations: ['devs'] });
    await expect(create(stored(devs, 'kubernetes.io/kube-apiserver-client'), ctx())).resolves.toBeUndefined();
  });

  it('reports an unparsable request', async () => {
    const obj = csrObject('', { request: b64('junk'), signerName: 'kubernetes.io/kube-apiserver-client', name: 'x' });
    const err = await rejection(create(obj, ctx()));
    expect(err.message).toBe('certificatesigningrequests.certificates.k8s.io "x" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST');
  });

  it('does not run on updates of the main resource', async () => {
    const obj = stored(await csrPem({ organizations: ['system:masters'] }), 'kubernetes.io/kube-apiserver-client');
    await expect(updateMain(obj, obj, ctx())).resolves.toBeUndefined();
  });
});
