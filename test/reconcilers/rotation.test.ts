/**
 * Client certificate rotation end to end, as a kubelet does it on a kubeadm cluster: the node joins
 * with a bootstrap token, then, authenticated only by the certificate it was issued (mTLS), submits
 * a renewal CSR as itself. The Node authorizer lets it create the CSR, kubeadm's binding of
 * system:nodes to selfnodeclient gets it approved, and the renewed certificate logs in as the node.
 */
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { certificateOf, getCsr, startController, startHarness, waitFor, type Harness, type RunningController } from './harness.js';

const KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
type Credential = { certPem: string; keyPem: string } | 'bootstrap';

describe('kubelet client certificate rotation (real server, real controller)', () => {
  let h: Harness;
  let ctl: RunningController;

  beforeAll(async () => {
    h = await startHarness();
    ctl = await startController(h, { clusterSigningCertFile: h.caFiles.certFile, clusterSigningKeyFile: h.caFiles.keyFile });
  });
  afterAll(async () => {
    await ctl?.stop();
    await h?.close();
  });

  /** Submits a kubelet client CSR for `node` as `who`; resolves with the key and the CSR once it is decided or issued. */
  async function request(who: Credential, name: string, node: string): Promise<{ keyPem: string; status: number }> {
    const { privateKeyPem } = generateKeyPair('ECDSA-P256');
    const pem = await createCertificateRequestPem({ privateKeyPem, commonName: `system:node:${node}`, organizations: ['system:nodes'] });
    const res = await h.call(who, 'POST', CSR_PATH, {
      metadata: { name },
      spec: { request: Buffer.from(pem).toString('base64'), signerName: KUBELET, usages: ['digital signature', 'client auth'], expirationSeconds: 600 },
    });
    return { keyPem: privateKeyPem, status: res.status };
  }

  const issued = (name: string): Promise<string> =>
    waitFor(`certificate of ${name}`, async () => {
      const csr = await getCsr(h, name);
      return csr.status?.certificate ? certificateOf(csr) : undefined;
    });

  async function whoAmI(cred: { certPem: string; keyPem: string }): Promise<{ username: string; groups: string[] }> {
    const res = await h.call(cred, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {});
    if (res.status !== 201) throw new Error(`selfsubjectreview: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body.status as { userInfo: { username: string; groups: string[] } }).userInfo;
  }

  it('renews with the previous certificate: approved as selfnodeclient, and the new certificate is the node', async () => {
    const first = await request('bootstrap', 'node-csr-rotor-1', 'rotor');
    expect(first.status).toBe(201);
    const firstCred = { certPem: await issued('node-csr-rotor-1'), keyPem: first.keyPem };
    expect((await whoAmI(firstCred)).username).toBe('system:node:rotor');

    const renewal = await request(firstCred, 'node-csr-rotor-2', 'rotor');
    expect(renewal.status).toBe(201);
    const secondPem = await issued('node-csr-rotor-2');
    const csr = await getCsr(h, 'node-csr-rotor-2');
    expect(csr.spec.username).toBe('system:node:rotor');
    expect(csr.spec.groups).toEqual(expect.arrayContaining(['system:nodes', 'system:authenticated']));
    expect(csr.status?.conditions?.find((c) => c.type === 'Approved')).toMatchObject({
      reason: 'AutoApproved',
      message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
    });
    expect(secondPem).not.toBe(firstCred.certPem);

    const user = await whoAmI({ certPem: secondPem, keyPem: renewal.keyPem });
    expect(user.username).toBe('system:node:rotor');
    expect(user.groups).toContain('system:nodes');
    const metrics = await ctl.registry.getSingleMetricAsString('kube_identity_csr_approvals_total');
    expect(metrics).toMatch(/kube_identity_csr_approvals_total\{signer="kubernetes.io\/kube-apiserver-client-kubelet",reason="selfnodeclient"\} 1/);
  });

  it('a node asking, with its certificate, for another node\'s client certificate is refused at create', async () => {
    const first = await request('bootstrap', 'node-csr-rotor-3', 'mallory');
    const cred = { certPem: await issued('node-csr-rotor-3'), keyPem: first.keyPem };
    expect((await request(cred, 'node-csr-steal', 'rotor')).status).toBe(403);
    expect((await h.call('admin', 'GET', `${CSR_PATH}/node-csr-steal`)).status).toBe(404);
  });
});
