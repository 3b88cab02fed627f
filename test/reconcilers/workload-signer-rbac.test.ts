/**
 * The workload signer with exactly the RBAC the plain manifests give (deploy/ plus
 * deploy/components/workload-signer, which the chart's rules equal: test/deploy/chart.test.ts), not
 * as an admin: the controller runs as the kube-identity ServiceAccount's identity, lists and watches
 * requests, writes /status only with `sign` on its signer name and publishes its ClusterTrustBundle
 * only with `attest`.
 */
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { DEPLOY_DIR, readKustomizeResources, type Obj } from '../deploy/manifests.js';
import { startController, startHarness, waitFor, type Harness, type RunningController } from './harness.js';
import { ecKey, PodWorld } from './pod-world.js';

const SIGNER = 'kube-identity.io/workload';
const SA_TOKEN = 'kube-identity-sa-token';

let h: Harness;
let ctl: RunningController;
let world: PodWorld;

const COLLECTIONS: Record<string, (ns: string) => string> = {
  ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  Role: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
  RoleBinding: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
};

beforeAll(async () => {
  h = await startHarness([`${SA_TOKEN},system:serviceaccount:kube-identity:kube-identity,uid-kid,"system:serviceaccounts,system:serviceaccounts:kube-identity"`]);
  world = new PodWorld(h);
  await world.create('/api/v1/namespaces', { metadata: { name: 'kube-identity' } });
  const manifests = [
    ...readKustomizeResources(path.join(DEPLOY_DIR, 'kustomization.yaml')),
    ...readKustomizeResources(path.join(DEPLOY_DIR, 'components', 'workload-signer', 'kustomization.yaml')),
  ];
  for (const doc of manifests) {
    const collection = COLLECTIONS[String(doc.kind)];
    if (collection) await world.create(collection(String((doc.metadata as Obj).namespace ?? 'kube-identity')), doc);
  }
  const ca = await createCertificateAuthority({ commonName: 'workload-ca' });
  writeFileSync(path.join(h.caDir, 'workload.crt'), ca.certPem);
  writeFileSync(path.join(h.caDir, 'workload.key'), ca.keyPem, { mode: 0o600 });
  await world.setUp(['api']);
  await world.pod('api-0', 'api', [SIGNER]);
  ctl = await startController(
    h,
    {
      controllerNamespace: 'kube-identity',
      trustBundleNamespace: 'kube-identity',
      workloadSignerNames: SIGNER,
      workloadSignerCertFile: path.join(h.caDir, 'workload.crt'),
      workloadSignerKeyFile: path.join(h.caDir, 'workload.key'),
    },
    {},
    SA_TOKEN,
  );
}, 60_000);

afterAll(async () => {
  await ctl?.stop();
  await h?.close();
});

it('issues and publishes with the manifests RBAC alone', async () => {
  const pcr = await world.answered(await world.requestFor('api-0', 'api', ecKey(), { signerName: SIGNER }));
  expect(pcr.status?.conditions?.map((c) => c.type)).toEqual(['Issued']);
  expect(new X509Certificate(pcr.status?.certificateChain ?? '').subjectAltName).toBe('URI:spiffe://cluster.local/ns/default/sa/api');
  const bundle = await waitFor('the ClusterTrustBundle', async () => {
    const res = await h.call('admin', 'GET', '/apis/certificates.k8s.io/v1beta1/clustertrustbundles/kube-identity.io:workload:kube-identity');
    return res.status === 200 ? (res.body.spec as { signerName: string; trustBundle: string }) : undefined;
  });
  expect(bundle.signerName).toBe(SIGNER);
  const configMap = await h.call('admin', 'GET', '/api/v1/namespaces/kube-identity/configmaps/kube-identity-trust-bundle');
  expect(Object.keys((configMap.body.data ?? {}) as Record<string, string>)).toEqual(['kube-identity.io_workload.crt']);
  // Nothing was refused along the way.
  expect(await ctl.registry.metrics()).not.toMatch(/^controller_runtime_reconcile_errors_total\{controller="workload-signer"\} [1-9]/m);
});
