/** csrapproving against the real server: who gets a kubelet client certificate automatically, and who does not. */
import { CoreV1Api } from '@kubernetes/client-node';
import { approve, certificateOf, createCsr, getCsr, startController, startHarness, waitFor, type Harness, type RunningController, type Who } from './harness.js';

const KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
const nodeSubject = (name: string) => ({ commonName: `system:node:${name}`, organizations: ['system:nodes'] });
const clientUsages = ['digital signature', 'client auth'];

describe('kubelet client auto-approval (real server, real controller)', () => {
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

  it('approves and issues a bootstrap-token kubelet CSR, and the certificate logs in as the node', async () => {
    const created = await createCsr(h, 'bootstrap', { name: 'node-csr-worker-1', signerName: KUBELET, usages: clientUsages, subject: nodeSubject('worker-1') });
    expect(created.status).toBe(201);
    const issued = await waitFor('certificate', async () => {
      const csr = await getCsr(h, 'node-csr-worker-1');
      return csr.status?.certificate ? csr : undefined;
    });
    expect(issued.spec.username).toBe('system:bootstrap:abcdef');
    expect(issued.status?.conditions?.find((c) => c.type === 'Approved')).toMatchObject({
      status: 'True',
      reason: 'AutoApproved',
      message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
    });
    const who = await h.call({ certPem: certificateOf(issued), keyPem: created.keyPem }, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {});
    expect(who.status).toBe(201);
    const user = (who.body.status as { userInfo: { username: string; groups: string[] } }).userInfo;
    expect(user.username).toBe('system:node:worker-1');
    expect(user.groups).toContain('system:nodes');

    const events = await ctl.client.api(CoreV1Api).listNamespacedEvent({ namespace: 'default' });
    const mine = events.items.filter((e) => e.involvedObject.name === 'node-csr-worker-1').map((e) => e.reason);
    expect(mine).toEqual(expect.arrayContaining(['AutoApproved', 'CertificateIssued']));
    const metrics = await ctl.registry.getSingleMetricAsString('kube_identity_csr_approvals_total');
    expect(metrics).toMatch(/kube_identity_csr_approvals_total\{signer="kubernetes.io\/kube-apiserver-client-kubelet",reason="nodeclient"\} 1/);
  });

  it('approves a node renewing its own certificate through selfnodeclient', async () => {
    await createCsr(h, 'node9', { name: 'renew-worker-9', signerName: KUBELET, usages: clientUsages, subject: nodeSubject('worker-9') });
    const csr = await waitFor('approval', async () => {
      const c = await getCsr(h, 'renew-worker-9');
      return c.status?.conditions?.length ? c : undefined;
    });
    expect(csr.status?.conditions?.[0]?.message).toBe('Auto approving self kubelet client certificate after SubjectAccessReview.');
  });

  const pending: [string, Who, { name: string; usages: string[]; subject: Parameters<typeof createCsr>[2]['subject'] }][] = [
    ['a requester without the nodeclient right is left pending', 'alice', { name: 'alice-kubelet', usages: clientUsages, subject: nodeSubject('worker-2') }],
    ['a kubelet client request with a DNS SAN is not recognised', 'bootstrap', { name: 'with-san', usages: clientUsages, subject: { ...nodeSubject('worker-3'), dnsNames: ['worker-3.example'] } }],
    [
      'a kubelet client request with an extra organization is not recognised',
      'bootstrap',
      { name: 'with-masters', usages: clientUsages, subject: { commonName: 'system:node:worker-4', organizations: ['system:nodes', 'system:masters'] } },
    ],
    ['a kubelet client request with server auth usage is not recognised', 'bootstrap', { name: 'server-usage', usages: ['digital signature', 'server auth'], subject: nodeSubject('worker-5') }],
    ['the identity comes from the requester, not the CN: alice asking for CN=alice is not a node', 'alice', { name: 'alice-self', usages: clientUsages, subject: { commonName: 'alice', organizations: ['system:nodes'] } }],
    [
      "a bootstrap token allowed to create CSRs but without kubeadm's node-token group joins no node",
      'tools',
      { name: 'tools-kubelet', usages: clientUsages, subject: nodeSubject('worker-7') },
    ],
  ];

  it("a bootstrap token without kubeadm's node-token group authenticates but cannot create a CSR", async () => {
    const who = await h.call('stray', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {});
    expect(who.status).toBe(201);
    expect(who.body.status).toMatchObject({ userInfo: { username: 'system:bootstrap:ghijkl', groups: ['system:bootstrappers', 'system:authenticated'] } });
    const res = await createCsr(h, 'stray', { name: 'stray-kubelet', signerName: KUBELET, usages: clientUsages, subject: nodeSubject('worker-10') });
    expect(res.status).toBe(403);
    expect((await h.call('admin', 'GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/stray-kubelet')).status).toBe(404);
  });

  it('a node asking for another node is refused at create by NodeRestriction, before any approver sees it', async () => {
    const res = await createCsr(h, 'node9', { name: 'node9-for-worker-8', signerName: KUBELET, usages: clientUsages, subject: nodeSubject('worker-8') });
    expect([res.status, res.body.message]).toEqual([403, 'certificatesigningrequests.certificates.k8s.io "node9-for-worker-8" is forbidden: can only create a node CSR with CN=system:node:worker-9']);
    expect((await h.call('admin', 'GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/node9-for-worker-8')).status).toBe(404);
  });

  it.each(pending)('%s', async (_title, who, c) => {
    const res = await createCsr(h, who, { ...c, signerName: KUBELET });
    expect(res.status).toBe(201);
    // A positive control created after it must be approved and issued; by then the approver has seen ours.
    const control = `control-${c.name}`;
    await createCsr(h, 'bootstrap', { name: control, signerName: KUBELET, usages: clientUsages, subject: nodeSubject(`ctl-${c.name}`) });
    await waitFor('control issued', async () => ((await getCsr(h, control)).status?.certificate ? true : undefined));
    const csr = await getCsr(h, c.name);
    expect(csr.status?.conditions ?? []).toEqual([]);
    expect(csr.status?.certificate ?? '').toBe('');
  });

  it('a ClusterRoleBinding written without subject apiGroup (as most manifests are) grants nodeclient, and the CSR is auto-approved', async () => {
    const binding = await h.call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'alice-nodeclient' },
      roleRef: { kind: 'ClusterRole', name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient' },
      subjects: [{ kind: 'User', name: 'alice' }],
    });
    expect(binding.status).toBe(201);
    expect(binding.body.subjects).toEqual([{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }]);
    await createCsr(h, 'alice', { name: 'alice-joins-worker-11', signerName: KUBELET, usages: clientUsages, subject: nodeSubject('worker-11') });
    const issued = await waitFor('certificate', async () => {
      const csr = await getCsr(h, 'alice-joins-worker-11');
      return csr.status?.certificate ? csr : undefined;
    });
    expect(issued.status?.conditions?.find((c) => c.type === 'Approved')?.reason).toBe('AutoApproved');
    const removed = await h.call('admin', 'DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/alice-nodeclient');
    expect(removed.status).toBe(200);
  });

  it('never touches a CSR that is already approved or denied', async () => {
    await createCsr(h, 'alice', { name: 'manually-approved', signerName: KUBELET, usages: clientUsages, subject: nodeSubject('worker-6') });
    await approve(h, 'manually-approved');
    const csr = await waitFor('issued', async () => {
      const c = await getCsr(h, 'manually-approved');
      return c.status?.certificate ? c : undefined;
    });
    expect(csr.status?.conditions?.map((c) => c.reason)).toEqual(['KubectlApprove']);
  });
});
