/** `kubectl kustomize deploy/` builds the plain-manifest install with the objects the controller needs. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expectHardenedController, loadMountedConfig } from './deploy-checks.js';
import { DEPLOY_DIR, controllerContainer as controllerContainerOf, findDoc, normaliseRbac, parseDocs, podSpec, rulesOf, type Obj } from './manifests.js';

const docs = parseDocs(execFileSync('kubectl', ['kustomize', DEPLOY_DIR], { encoding: 'utf8' }), 'kubectl kustomize deploy/');
const meta = (d: Obj) => d.metadata as Obj;

describe('kustomize base (deploy/)', () => {
  it('builds the expected objects, all labelled, namespaced ones in kube-identity', () => {
    const kinds = docs.map((d) => `${String(d.kind)}/${String(meta(d).name)}`).sort();
    expect(kinds).toEqual(
      [
        'ClusterRole/kube-identity:approver',
        'ClusterRole/kube-identity:cleaner',
        'ClusterRole/kube-identity:metrics-auth',
        'ClusterRole/kube-identity:metrics-reader',
        'ClusterRole/kube-identity:signer',
        'ClusterRoleBinding/kube-identity:approver',
        'ClusterRoleBinding/kube-identity:cleaner',
        'ClusterRoleBinding/kube-identity:metrics-auth',
        'ClusterRoleBinding/kube-identity:signer',
        'ConfigMap/kube-identity-config',
        'Deployment/kube-identity',
        'Namespace/kube-identity',
        'Role/kube-identity:leader-election',
        'Role/kube-identity:revisions',
        'RoleBinding/kube-identity:leader-election',
        'RoleBinding/kube-identity:revisions',
        'Service/kube-identity-metrics',
        'ServiceAccount/kube-identity',
      ].sort(),
    );
    for (const d of docs) expect(meta(d).labels).toMatchObject({ 'app.kubernetes.io/name': 'kube-identity' });
    for (const d of docs.filter((x) => !String(x.kind).startsWith('Cluster') && x.kind !== 'Namespace')) expect(meta(d).namespace).toBe('kube-identity');
  });

  it('grants each reconciler exactly its verbs', () => {
    const rbac = normaliseRbac(docs);
    const signers = (kind: string, suffix: string, verb: string) => rulesOf(rbac, kind, suffix).find((r) => (r.verbs as string[]).includes(verb))?.resourceNames;
    expect(signers('ClusterRole', ':approver', 'approve')).toEqual(['kubernetes.io/kube-apiserver-client-kubelet']);
    expect(signers('ClusterRole', ':signer', 'sign')).toEqual(['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving']);
    expect(rulesOf(rbac, 'ClusterRole', ':cleaner')).toEqual(
      ['certificatesigningrequests', 'podcertificaterequests'].map((resource) => ({ apiGroups: ['certificates.k8s.io'], resources: [resource], resourceNames: [], verbs: ['delete', 'list', 'watch'], nonResourceURLs: [] })),
    );
    // Its own Lease only, beyond creating it (a create cannot name what it creates).
    expect(rulesOf(rbac, 'Role', ':leader-election')).toContainEqual({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [], verbs: ['create'], nonResourceURLs: [] });
    expect(rulesOf(rbac, 'Role', ':leader-election')).toContainEqual({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['kube-identity-controller'], verbs: ['get', 'update'], nonResourceURLs: [] });
    const revisions = rulesOf(rbac, 'Role', ':revisions');
    expect(revisions.map((r) => `${String(r.resources)}:${String(r.verbs)}:${String(r.resourceNames)}`).sort()).toEqual([
      'configmaps:create:',
      'configmaps:get,update:kube-identity-trust-bundle',
      'controllerrevisions:create,delete,get,list,update,watch:',
    ]);
    // No ClusterRole can write anything but the CSR subresources it owns.
    const writes = [...rbac.entries()].filter(([k]) => k.startsWith('ClusterRole ')).flatMap(([, rules]) => (rules as string[]).map((r) => JSON.parse(r) as Obj));
    expect(writes.filter((r) => (r.verbs as string[]).some((v) => ['update', 'patch'].includes(v))).flatMap((r) => r.resources)).toEqual(
      expect.arrayContaining(['certificatesigningrequests/approval', 'certificatesigningrequests/status', 'events']),
    );
    expect(writes.flatMap((r) => r.verbs as string[])).not.toContain('*');
    // The secure metrics listener may only ask about callers; the reader role is for Prometheus, bound by the operator.
    expect(rulesOf(rbac, 'ClusterRole', ':metrics-auth').map((r) => `${String(r.resources)}:${String(r.verbs)}`).sort()).toEqual(['subjectaccessreviews:create', 'tokenreviews:create']);
    expect(rulesOf(rbac, 'ClusterRole', ':metrics-reader')).toEqual([{ apiGroups: [], resources: [], resourceNames: [], verbs: ['get'], nonResourceURLs: ['/metrics'] }]);
  });

  it('binds every role to the ServiceAccount the Deployment runs as', () => {
    const sa = findDoc(docs, 'ServiceAccount');
    const deployment = findDoc(docs, 'Deployment');
    expect(podSpec(deployment).serviceAccountName).toBe(meta(sa).name);
    for (const b of docs.filter((d) => String(d.kind).endsWith('Binding'))) {
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: meta(sa).name, namespace: 'kube-identity' }]);
      expect(findDoc(docs, String((b.roleRef as Obj).kind), String((b.roleRef as Obj).name))).toBeDefined();
    }
  });

  it('runs a hardened controller that loads its config and mounts the CA Secret', async () => {
    const deployment = findDoc(docs, 'Deployment');
    expectHardenedController(deployment);
    const config = await loadMountedConfig(deployment, docs, 'kube-identity');
    expect(config).toMatchObject({ leaderElect: true, leaderElectionNamespace: 'kube-identity', controllerNamespace: 'kube-identity', trustBundleNamespace: 'kube-identity', clusterSigningCertFile: '/etc/kube-identity/ca/tls.crt' });
    expect((podSpec(deployment).volumes as Obj[]).find((v) => v.name === 'ca')).toEqual({ name: 'ca', secret: { secretName: 'kube-identity-ca' } });
  });

  it('selects the controller pods from the metrics Service', () => {
    const service = findDoc(docs, 'Service');
    const podLabels = ((findDoc(docs, 'Deployment').spec as Obj).template as Obj).metadata as Obj;
    expect(podLabels.labels).toMatchObject((service.spec as Obj).selector as Obj);
    expect((service.spec as Obj).ports).toEqual([{ name: 'http-metrics', port: 8080, targetPort: 'http-metrics', protocol: 'TCP' }]);
  });

  it('the serving-approver component adds its RBAC and turns it on', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kid-kustomize-'));
    try {
      // Kustomize wants relative paths, from a root outside deploy/.
      const rel = relative(dir, DEPLOY_DIR);
      writeFileSync(join(dir, 'kustomization.yaml'), `resources:\n  - ${rel}\ncomponents:\n  - ${rel}/components/serving-approver\n`);
      const withServing = parseDocs(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }), 'serving-approver component');
      const rbac = normaliseRbac(withServing);
      expect(rulesOf(rbac, 'ClusterRole', ':serving-approver').map((r) => `${String(r.resources)}:${String(r.verbs)}:${String(r.resourceNames)}`).sort()).toEqual([
        'certificatesigningrequests/approval:update:',
        'certificatesigningrequests:get,list,watch:',
        'endpoints,services:get:kubernetes',
        'events:create,patch,update:',
        'nodes:get,list,watch:',
        'signers:approve:kubernetes.io/kubelet-serving',
      ]);
      expect((controllerContainerOf(findDoc(withServing, 'Deployment')).args as string[])).toContain('--approve-kubelet-serving=true');
      const binding = findDoc(withServing, 'ClusterRoleBinding', 'kube-identity:serving-approver');
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'kube-identity', namespace: 'kube-identity' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('the workload-signer component adds its RBAC, mounts its CA and turns it on', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kid-kustomize-'));
    try {
      const rel = relative(dir, DEPLOY_DIR);
      writeFileSync(join(dir, 'kustomization.yaml'), `resources:\n  - ${rel}\ncomponents:\n  - ${rel}/components/workload-signer\n`);
      const docs = parseDocs(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }), 'workload-signer component');
      expect(rulesOf(normaliseRbac(docs), 'ClusterRole', ':workload-signer').map((r) => `${String(r.resources)}:${String(r.verbs)}:${String(r.resourceNames)}`).sort()).toEqual([
        'clustertrustbundles:create,delete,get,list,update,watch:',
        'events:create,patch,update:',
        'podcertificaterequests/status:update:',
        'podcertificaterequests:get,list,watch:',
        'signers:attest,sign:kube-identity.io/workload',
      ]);
      const deployment = findDoc(docs, 'Deployment');
      expect(controllerContainerOf(deployment).args as string[]).toEqual(
        expect.arrayContaining(['--workload-signer-names=kube-identity.io/workload', '--workload-signer-cert-file=/etc/kube-identity/workload-ca/tls.crt', '--workload-signer-key-file=/etc/kube-identity/workload-ca/tls.key']),
      );
      const volumes = ((deployment.spec as Obj).template as Obj).spec as Obj;
      expect(volumes.volumes).toContainEqual({ name: 'workload-ca', secret: { secretName: 'kube-identity-workload-ca' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
