/**
 * The Helm chart check (no helm binary here): values against values.schema.json, every value
 * documented, every template rendered and parsed, RBAC equal to deploy/, and the rendered controller
 * configuration accepted by the controller's own config loader.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isPair, isScalar, isSeq, parse, parseDocument, type YAMLMap } from 'yaml';
import { CONTROLLER_CONFIG_SCHEMA } from '../../src/config/schema.js';
import { signingPlan } from '../../src/controller/signer/signing-plan.js';
import { expectHardenedController, loadMountedConfig } from './deploy-checks.js';
import { describeWithTools } from '../helpers/tools.js';
import { RENDERER_TOOLS } from '../../hack/chart-render.mjs';
import { loadValues, renderChart, type RenderedChart, type RenderOptions } from './helm-chart.js';
import { CHART_DIR, DEPLOY_DIR, controllerContainer, findDoc, normaliseRbac, podSpec, readKustomizeResources, rulesOf, type Obj } from './manifests.js';

const render = (opts: RenderOptions = {}) => renderChart(CHART_DIR, { releaseName: 'kube-identity', namespace: 'kube-identity', ...opts });
const docsOf = (opts: RenderOptions = {}): Obj[] => render(opts).docs.map((d) => d.doc);

describe('values', () => {
  it('values.yaml satisfies values.schema.json', () => {
    expect(() => loadValues(CHART_DIR)).not.toThrow();
  });

  it('the schema rejects unknown keys and bad values', () => {
    expect(() => loadValues(CHART_DIR, { replicas: 2 })).toThrow(/additionalProperties/);
    expect(() => loadValues(CHART_DIR, { config: { notAKey: 1 } })).toThrow(/additionalProperties/);
    expect(() => loadValues(CHART_DIR, { logLevel: 'trace' })).toThrow(/enum/);
    expect(() => loadValues(CHART_DIR, { leaderElection: { leaseDuration: '15 seconds' } })).toThrow(/pattern/);
    expect(() => loadValues(CHART_DIR, { rbac: { extraSignerNames: ['not a signer'] } })).toThrow(/pattern/);
  });

  it('values.schema.json `config` lists exactly the controller config keys, with matching types', () => {
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as { properties: { config: { properties: Record<string, { type: string }> } } };
    const props = schema.properties.config.properties;
    expect(Object.keys(props).sort()).toEqual(Object.keys(CONTROLLER_CONFIG_SCHEMA).sort());
    const jsonType = { bool: 'boolean', int: 'integer', number: 'number', string: 'string', enum: 'string', duration: 'string' } as const;
    for (const [key, spec] of Object.entries(CONTROLLER_CONFIG_SCHEMA)) expect([key, props[key]?.type]).toEqual([key, jsonType[spec.type]]);
  });

  it('every value in values.yaml carries a comment (a commented block documents its children)', () => {
    const doc = parseDocument(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'));
    const undocumented: string[] = [];
    const walk = (map: YAMLMap, path: string): void => {
      map.items.forEach((pair, i) => {
        if (!isPair(pair) || !isScalar(pair.key)) return;
        const key = `${path}${String(pair.key.value)}`;
        const comment = pair.key.commentBefore ?? (i === 0 ? map.commentBefore : undefined);
        if (comment) return;
        if (isMap(pair.value) && pair.value.items.length > 0) walk(pair.value, `${key}.`);
        else undocumented.push(key);
      });
    };
    if (!isMap(doc.contents)) throw new Error('values.yaml is not a mapping');
    walk(doc.contents, '');
    expect(undocumented).toEqual([]);
    expect(isSeq(doc.get('tolerations'))).toBe(true);
  });
});

describeWithTools(RENDERER_TOOLS)('rendering with default values', () => {
  let rendered: RenderedChart;
  let docs: Obj[];
  beforeAll(() => {
    rendered = render();
    docs = rendered.docs.map((d) => d.doc);
  });

  it('renders every template into parseable Kubernetes objects', () => {
    const templates = readdirSync(join(CHART_DIR, 'templates')).filter((f) => !f.startsWith('_'));
    expect([...rendered.files.keys()].sort()).toEqual(templates.sort());
    for (const doc of docs) {
      expect(typeof doc.apiVersion).toBe('string');
      expect(typeof doc.kind).toBe('string');
      expect((doc.metadata as Obj).name).toMatch(/^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$/);
    }
    const kinds = docs.map((d) => `${String(d.kind)}/${String((d.metadata as Obj).name)}`).sort();
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
        'PodDisruptionBudget/kube-identity',
        'Role/kube-identity:leader-election',
        'Role/kube-identity:revisions',
        'RoleBinding/kube-identity:leader-election',
        'RoleBinding/kube-identity:revisions',
        'Secret/kube-identity-kubelet-serving-ca',
        'Service/kube-identity-metrics',
        'ServiceAccount/kube-identity',
      ].sort(),
    );
    for (const doc of docs.filter((d) => !String(d.kind).startsWith('Cluster'))) expect((doc.metadata as Obj).namespace).toBe('kube-identity');
  });

  it('grants exactly the RBAC that deploy/ grants, when it signs what deploy/ signs', () => {
    // deploy/ signs the three Kubernetes signers with one CA; the chart signs the client signers
    // only with the cluster CA given.
    const fromDeploy = normaliseRbac(readKustomizeResources(join(DEPLOY_DIR, 'kustomization.yaml')));
    const withClusterCa = docsOf({ values: { ca: { existingSecret: 'cluster-ca' } } });
    expect(Object.fromEntries(normaliseRbac(withClusterCa))).toEqual(Object.fromEntries(fromDeploy));
  });

  it('hardens the controller pod and probes the metrics listener', () => {
    const deployment = findDoc(docs, 'Deployment');
    expectHardenedController(deployment);
    const port = (controllerContainer(deployment).ports as Obj[])[0];
    expect(port?.containerPort).toBe(8080);
  });

  it('writes a configuration the controller loads: leader election on, kubelet-serving alone signed, with the generated CA', async () => {
    const deployment = findDoc(docs, 'Deployment');
    const config = await loadMountedConfig(deployment, docs);
    expect(config).toMatchObject({ leaderElect: true, metricsBindAddress: ':8080', metricsSecure: true, metricsCertPath: '', logLevel: 'info', customSigners: '' });
    expect([config.leaderElectionNamespace, config.controllerNamespace, config.trustBundleNamespace]).toEqual(['kube-identity', 'kube-identity', 'kube-identity']);
    const caVolume = (podSpec(deployment).volumes as Obj[]).find((v) => v.name === 'ca');
    expect(caVolume).toEqual({ name: 'ca', secret: { secretName: 'kube-identity-kubelet-serving-ca' } });
    const mount = (controllerContainer(deployment).volumeMounts as Obj[]).find((m) => m.name === 'ca');
    expect(config.clusterSigningKubeletServingCertFile).toBe(`${String(mount?.mountPath)}/tls.crt`);
    expect(config.clusterSigningKubeletServingKeyFile).toBe(`${String(mount?.mountPath)}/tls.key`);
    // A CA of the chart's own cannot make client certificates the API server accepts: the client
    // signers do not run, and no signer uses a shared pair.
    expect(signingPlan(config).map((e) => e.policy.signerName)).toEqual(['kubernetes.io/kubelet-serving']);
    expect(config.clusterSigningCertFile).toBe('');
  });

  it('generates a usable CA into a kept kubernetes.io/tls Secret', () => {
    const secret = findDoc(docs, 'Secret');
    expect(secret.type).toBe('kubernetes.io/tls');
    expect((secret.metadata as Obj).annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    const data = secret.data as Record<string, string>;
    const cert = new X509Certificate(Buffer.from(data['tls.crt'] as string, 'base64'));
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe('CN=kube-identity-kubelet-serving-ca');
    const key = createPrivateKey(Buffer.from(data['tls.key'] as string, 'base64').toString());
    expect(cert.checkPrivateKey(key)).toBe(true);
    expect(createPublicKey(key).asymmetricKeyType).toBe('rsa');
  });

  it('renders NOTES.txt with the release, the kubelet-serving CA Secret, and why the client signers are not signed', () => {
    const notes = rendered.files.get('NOTES.txt') ?? '';
    expect(notes).toContain('release kube-identity in namespace kube-identity');
    expect(notes).toContain('kubernetes.io/kubelet-serving: signed with the kubelet-serving CA in Secret kube-identity-kubelet-serving-ca (generated by Helm');
    expect(notes).toContain('kubernetes.io/kube-apiserver-client and kubernetes.io/kube-apiserver-client-kubelet are NOT signed');
    expect(notes).toContain('set ca.existingSecret to its name');
  });
});

describeWithTools(RENDERER_TOOLS)('rendering with other values', () => {
  it('with the cluster CA given, signs the client signers with it and kubelet-serving still with its own CA', async () => {
    const docs = docsOf({ values: { ca: { existingSecret: 'cluster-ca' } } });
    expect(docs.filter((d) => d.kind === 'Secret').map((d) => (d.metadata as Obj).name)).toEqual(['kube-identity-kubelet-serving-ca']);
    const deployment = findDoc(docs, 'Deployment');
    expect((podSpec(deployment).volumes as Obj[]).filter((v) => v.secret)).toEqual([
      { name: 'ca', secret: { secretName: 'kube-identity-kubelet-serving-ca' } },
      { name: 'cluster-ca', secret: { secretName: 'cluster-ca' } },
    ]);
    const config = await loadMountedConfig(deployment, docs);
    expect(signingPlan(config).map((e) => `${e.policy.signerName} ${e.files.certFile}`)).toEqual([
      'kubernetes.io/kubelet-serving /etc/kube-identity/ca/tls.crt',
      'kubernetes.io/kube-apiserver-client-kubelet /etc/kube-identity/cluster-ca/tls.crt',
      'kubernetes.io/kube-apiserver-client /etc/kube-identity/cluster-ca/tls.crt',
    ]);
    const mounts = (controllerContainer(deployment).volumeMounts as Obj[]).map((m) => `${String(m.name)} ${String(m.mountPath)}`);
    expect(mounts).toEqual(expect.arrayContaining(['ca /etc/kube-identity/ca', 'cluster-ca /etc/kube-identity/cluster-ca']));
    const notes = render({ values: { ca: { existingSecret: 'cluster-ca' } } }).files.get('NOTES.txt') ?? '';
    expect(notes).toContain('kubernetes.io/kube-apiserver-client and kubernetes.io/kube-apiserver-client-kubelet: signed with the cluster CA in\nSecret cluster-ca');
  });

  it('custom signers sign with the generated CA, never the cluster CA', async () => {
    const docs = docsOf({ values: { ca: { existingSecret: 'cluster-ca' }, signing: { customSigners: ['example.com/a'] } } });
    const config = await loadMountedConfig(findDoc(docs, 'Deployment'), docs);
    expect(config.customSigners).toBe('example.com/a=/etc/kube-identity/ca/tls.crt:/etc/kube-identity/ca/tls.key');
    expect(() => render({ values: { ca: { generate: false }, signing: { customSigners: ['example.com/a'] } } })).toThrow(/signing.customSigners sign with the chart's generated CA/);
  });

  it('runs without signing when there is no CA at all', async () => {
    const docs = docsOf({ values: { ca: { generate: false } } });
    const deployment = findDoc(docs, 'Deployment');
    expect((podSpec(deployment).volumes as Obj[]).map((v) => v.name)).toEqual(['config', 'tmp']);
    expect(signingPlan(await loadMountedConfig(deployment, docs))).toEqual([]);
  });

  it('refuses several replicas without leader election', () => {
    expect(() => render({ values: { leaderElection: { enabled: false } } })).toThrow(/replicaCount > 1 requires leaderElection.enabled/);
  });

  it('runs a single replica without leader election, Lease Role or PDB', async () => {
    const docs = docsOf({ values: { replicaCount: 1, leaderElection: { enabled: false } } });
    expect(docs.filter((d) => d.kind === 'PodDisruptionBudget' || String((d.metadata as Obj).name).endsWith(':leader-election'))).toEqual([]);
    const config = await loadMountedConfig(findDoc(docs, 'Deployment'), docs);
    expect(config.leaderElect).toBe(false);
  });

  it('renders the ServiceMonitor only when enabled and the cluster serves monitoring.coreos.com/v1, secure by default', async () => {
    const values = { metrics: { serviceMonitor: { enabled: true, labels: { release: 'prom' } } } };
    const without = render({ values });
    expect(without.docs.some((d) => d.doc.kind === 'ServiceMonitor')).toBe(false);
    expect(without.files.get('NOTES.txt')).toContain('does not serve monitoring.coreos.com/v1');
    const sm = findDoc(docsOf({ values, apiVersions: ['monitoring.coreos.com/v1'] }), 'ServiceMonitor');
    expect((sm.metadata as Obj).labels).toMatchObject({ release: 'prom', 'app.kubernetes.io/instance': 'kube-identity' });
    // Secure by default: Prometheus' own token, and a self-signed listener it cannot verify.
    const scrape = { port: 'http-metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s', honorLabels: false };
    const token = { scheme: 'https', bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' };
    expect((sm.spec as Obj).endpoints).toEqual([{ ...scrape, ...token, tlsConfig: { insecureSkipVerify: true } }]);
    // With the operator's certificate Secret: verified against its ca.crt, the pair mounted where the config points.
    const certValues = { metrics: { ...values.metrics, secure: { certSecret: 'metrics-tls' } } };
    const withCert = docsOf({ values: certValues, apiVersions: ['monitoring.coreos.com/v1'] });
    expect((findDoc(withCert, 'ServiceMonitor').spec as Obj).endpoints).toEqual([
      { ...scrape, ...token, tlsConfig: { serverName: 'kube-identity-metrics.kube-identity.svc', ca: { secret: { name: 'metrics-tls', key: 'ca.crt' } } } },
    ]);
    const deployment = findDoc(withCert, 'Deployment');
    expect((podSpec(deployment).volumes as Obj[]).find((v) => v.name === 'metrics-certs')).toEqual({ name: 'metrics-certs', secret: { secretName: 'metrics-tls' } });
    expect(await loadMountedConfig(deployment, withCert)).toMatchObject({ metricsSecure: true, metricsCertPath: '/etc/kube-identity/metrics-certs' });
    // Plain HTTP when turned off: no token, no TLS, no metrics RBAC.
    const plain = docsOf({ values: { metrics: { ...values.metrics, secure: { enabled: false } } }, apiVersions: ['monitoring.coreos.com/v1'] });
    expect((findDoc(plain, 'ServiceMonitor').spec as Obj).endpoints).toEqual([scrape]);
    expect(plain.some((d) => String((d.metadata as Obj).name).includes(':metrics-'))).toBe(false);
    expect(controllerContainer(findDoc(plain, 'Deployment')).livenessProbe).toEqual(expect.objectContaining({ httpGet: { path: '/healthz', port: 'http-metrics' } }));
    expect(docsOf({ apiVersions: ['monitoring.coreos.com/v1'] }).some((d) => d.kind === 'ServiceMonitor')).toBe(false);
    expect(() => render({ values: { metrics: { serviceMonitor: { enabled: true }, service: { enabled: false } } } })).toThrow(/requires metrics.service.enabled/);
  });

  it('ships the Grafana dashboard as a ConfigMap the Grafana sidecar picks up, only when enabled', () => {
    expect(docsOf().some((d) => String((d.metadata as Obj).name).endsWith('-dashboard'))).toBe(false);
    const cm = findDoc(docsOf({ values: { metrics: { dashboard: { enabled: true, annotations: { grafana_folder: 'Identity' } } } } }), 'ConfigMap', 'kube-identity-dashboard');
    expect((cm.metadata as Obj).labels).toMatchObject({ grafana_dashboard: '1', 'app.kubernetes.io/instance': 'kube-identity' });
    expect((cm.metadata as Obj).annotations).toEqual({ grafana_folder: 'Identity' });
    expect(Object.keys(cm.data as Obj)).toEqual(['kube-identity.json']);
    expect((cm.data as Obj)['kube-identity.json']).toBe(readFileSync(join(CHART_DIR, 'dashboards', 'kube-identity.json'), 'utf8'));
    const elsewhere = findDoc(docsOf({ values: { metrics: { dashboard: { enabled: true, namespace: 'monitoring' } } } }), 'ConfigMap', 'kube-identity-dashboard');
    expect((elsewhere.metadata as Obj).namespace).toBe('monitoring');
  });

  it('renders the PrometheusRule from rules/kube-identity.rules.yaml when enabled and the cluster serves monitoring.coreos.com/v1', () => {
    const values = { metrics: { prometheusRule: { enabled: true, labels: { release: 'prom' } } } };
    const without = render({ values });
    expect(without.docs.some((d) => d.doc.kind === 'PrometheusRule')).toBe(false);
    expect(without.files.get('NOTES.txt')).toContain('no PrometheusRule was created');
    const rule = findDoc(docsOf({ values, apiVersions: ['monitoring.coreos.com/v1'] }), 'PrometheusRule');
    expect((rule.metadata as Obj).labels).toMatchObject({ release: 'prom', 'app.kubernetes.io/instance': 'kube-identity' });
    expect(rule.spec).toEqual(parse(readFileSync(join(CHART_DIR, 'rules', 'kube-identity.rules.yaml'), 'utf8')));
    expect(docsOf({ apiVersions: ['monitoring.coreos.com/v1'] }).some((d) => d.kind === 'PrometheusRule')).toBe(false);
  });

  it('signs custom signers with the generated CA and grants sign on them', async () => {
    const docs = docsOf({ values: { signing: { customSigners: ['example.com/a', 'example.com/b'] } } });
    const files = '/etc/kube-identity/ca/tls.crt:/etc/kube-identity/ca/tls.key';
    expect((await loadMountedConfig(findDoc(docs, 'Deployment'), docs)).customSigners).toBe(`example.com/a=${files};example.com/b=${files}`);
    const sign = rulesOf(normaliseRbac(docs), 'ClusterRole', ':signer').find((r) => (r.verbs as string[]).includes('sign'));
    expect(sign?.resourceNames).toEqual(expect.arrayContaining(['example.com/a', 'example.com/b', 'kubernetes.io/kubelet-serving']));
  });

  it('runs the serving approver when enabled: its options in the config, its RBAC as deploy/components/serving-approver grants it', async () => {
    expect(() => rulesOf(normaliseRbac(docsOf()), 'ClusterRole', ':serving-approver')).toThrow(/found 0/);
    const docs = docsOf({ values: { servingApprover: { enabled: true, allowedIpRanges: ['10.0.0.0/8', 'fd00::/8'], maxPendingPerNode: 5, dryRun: true } } });
    const config = await loadMountedConfig(findDoc(docs, 'Deployment'), docs);
    expect(config).toMatchObject({
      approveKubeletServing: true,
      kubeletServingDnsRegex: CONTROLLER_CONFIG_SCHEMA.kubeletServingDnsRegex.default,
      kubeletServingAllowedIpRanges: '10.0.0.0/8,fd00::/8',
      kubeletServingRequireNodeAddresses: true,
      kubeletServingMaxPendingPerNode: 5,
      kubeletServingDryRun: true,
      kubeletServingDeny: false,
      kubeletServingBypassDnsResolution: false,
      clusterDomain: 'cluster.local',
      serviceClusterIpRange: '10.96.0.0/12',
    });
    // Defaults of the chart and of the controller agree.
    const defaultDocs = docsOf({ values: { servingApprover: { enabled: true } } });
    const defaults = await loadMountedConfig(findDoc(defaultDocs, 'Deployment'), defaultDocs);
    expect(defaults.kubeletServingAllowedIpRanges).toBe(CONTROLLER_CONFIG_SCHEMA.kubeletServingAllowedIpRanges.default);
    const chartRules = rulesOf(normaliseRbac(docs), 'ClusterRole', ':serving-approver');
    const component = readKustomizeResources(join(DEPLOY_DIR, 'components', 'serving-approver', 'kustomization.yaml'));
    expect(chartRules).toEqual(rulesOf(normaliseRbac(component), 'ClusterRole', ':serving-approver'));
    expect(chartRules).toContainEqual({ apiGroups: [''], resources: ['nodes'], resourceNames: [], verbs: ['get', 'list', 'watch'], nonResourceURLs: [] });
    expect(chartRules).toContainEqual({ apiGroups: [''], resources: ['endpoints', 'services'], resourceNames: ['kubernetes'], verbs: ['get'], nonResourceURLs: [] });
    expect(() => loadValues(CHART_DIR, { servingApprover: { allowedIpRanges: ['10.0.0.0'] } })).toThrow(/pattern/);
  });

  it('runs the workload signer when enabled: its own generated CA mounted, its options in the config, its RBAC as deploy/components/workload-signer grants it', async () => {
    expect(() => rulesOf(normaliseRbac(docsOf()), 'ClusterRole', ':workload-signer')).toThrow(/found 0/);
    expect(docsOf().some((d) => d.kind === 'Secret' && (d.metadata as Obj).name === 'kube-identity-workload-ca')).toBe(false);
    const docs = docsOf({ values: { workloadSigner: { enabled: true, trustDomain: 'example.org', keyTypes: ['ECDSAP256', 'ED25519'], maxDuration: '6h' } } });
    const config = await loadMountedConfig(findDoc(docs, 'Deployment'), docs);
    expect(config).toMatchObject({
      workloadSignerNames: 'kube-identity.io/workload',
      workloadSignerTrustDomain: 'example.org',
      workloadSignerKeyTypes: 'ECDSAP256,ED25519',
      workloadSignerMaxDuration: 6 * 3_600_000,
      workloadSignerCertFile: '/etc/kube-identity/workload-ca/tls.crt',
      workloadSignerKeyFile: '/etc/kube-identity/workload-ca/tls.key',
    });
    // Its CA is a generated one of its own, mounted where the config points.
    const secret = findDoc(docs, 'Secret', 'kube-identity-workload-ca');
    const ca = new X509Certificate(Buffer.from(String((secret.data as Obj)['tls.crt']), 'base64'));
    expect([ca.ca, ca.subject]).toEqual([true, 'CN=kube-identity-workload-ca']);
    const serving = findDoc(docs, 'Secret', 'kube-identity-kubelet-serving-ca');
    expect((serving.data as Obj)['tls.crt']).not.toBe((secret.data as Obj)['tls.crt']);
    const volume = (podSpec(findDoc(docs, 'Deployment')).volumes as Obj[]).find((v) => v.name === 'workload-ca');
    expect(volume?.secret).toEqual({ secretName: 'kube-identity-workload-ca' });
    expect(controllerContainer(findDoc(docs, 'Deployment')).volumeMounts).toContainEqual({ name: 'workload-ca', mountPath: '/etc/kube-identity/workload-ca', readOnly: true });
    const chartRules = rulesOf(normaliseRbac(docs), 'ClusterRole', ':workload-signer');
    const component = readKustomizeResources(join(DEPLOY_DIR, 'components', 'workload-signer', 'kustomization.yaml'));
    expect(chartRules).toEqual(rulesOf(normaliseRbac(component), 'ClusterRole', ':workload-signer'));
    expect(chartRules).toContainEqual({ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kube-identity.io/workload'], verbs: ['attest', 'sign'], nonResourceURLs: [] });
    // A CA the operator gives: nothing generated.
    const given = docsOf({ values: { workloadSigner: { enabled: true, ca: { existingSecret: 'my-workload-ca' } } } });
    expect(given.some((d) => d.kind === 'Secret' && (d.metadata as Obj).name === 'kube-identity-workload-ca')).toBe(false);
    expect((podSpec(findDoc(given, 'Deployment')).volumes as Obj[]).find((v) => v.name === 'workload-ca')?.secret).toEqual({ secretName: 'my-workload-ca' });
    expect(() => loadValues(CHART_DIR, { workloadSigner: { keyTypes: ['RSA2048'] } })).toThrow(/enum|allowed/);
  });

  it('derives signer resourceNames from values', () => {
    const docs = docsOf({ values: { rbac: { extraSignerNames: ['example.com/internal', 'kubernetes.io/kubelet-serving'] } } });
    const sign = rulesOf(normaliseRbac(docs), 'ClusterRole', ':signer').find((r) => (r.verbs as string[]).includes('sign'));
    expect(sign?.resourceNames).toEqual(['example.com/internal', 'kubernetes.io/kubelet-serving']);
  });

  it('grants sign and attest on exactly the signers the rendered configuration signs, and no signers rule when it signs none', async () => {
    const shared = { clusterSigningCertFile: '/etc/ca/tls.crt', clusterSigningKeyFile: '/etc/ca/tls.key' };
    const cases: [Obj, string[]][] = [
      [{}, ['kubernetes.io/kubelet-serving']],
      [{ ca: { existingSecret: 'cluster-ca' } }, ['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving']],
      [{ ca: { existingSecret: 'cluster-ca', generate: false } }, ['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet']],
      [{ ca: { generate: false } }, []],
      [{ signing: { customSigners: ['example.com/a'] } }, ['example.com/a', 'kubernetes.io/kubelet-serving']],
      [{ config: { customSigners: 'example.com/own=/etc/own/tls.crt:/etc/own/tls.key' } }, ['example.com/own', 'kubernetes.io/kubelet-serving']],
      // `config` overriding the chart's keys with one shared pair: every Kubernetes signer runs, legacy-unknown too.
      [
        { ca: { generate: false }, config: { ...shared, customSigners: 'example.com/shared' } },
        ['example.com/shared', 'kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving', 'kubernetes.io/legacy-unknown'],
      ],
    ];
    for (const [values, names] of cases) {
      const docs = docsOf({ values });
      const signed = signingPlan(await loadMountedConfig(findDoc(docs, 'Deployment'), docs)).map((e) => e.policy.signerName);
      const signerRules = rulesOf(normaliseRbac(docs), 'ClusterRole', ':signer').filter((r) => (r.resources as string[]).includes('signers'));
      const expected = names.length === 0 ? [] : [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: names, verbs: ['attest', 'sign'], nonResourceURLs: [] }];
      expect({ values, signed: signed.sort(), signerRules }).toEqual({ values, signed: names, signerRules: expected });
    }
  });

  it('refuses the removed rbac.signerNames instead of ignoring it', () => {
    expect(() => render({ values: { rbac: { signerNames: ['kubernetes.io/kube-apiserver-client'] } } })).toThrow(/rbac.signerNames was removed.*rbac.extraSignerNames/);
  });

  it('creates no RBAC with rbac.create=false and requires a ServiceAccount name without serviceAccount.create', () => {
    const docs = docsOf({ values: { rbac: { create: false } } });
    expect(normaliseRbac(docs).size).toBe(0);
    expect(() => render({ values: { serviceAccount: { create: false } } })).toThrow(/serviceAccount.name is required/);
    const own = docsOf({ values: { serviceAccount: { create: false, name: 'mine' } } });
    expect(own.some((d) => d.kind === 'ServiceAccount')).toBe(false);
    expect(podSpec(findDoc(own, 'Deployment')).serviceAccountName).toBe('mine');
  });

  it('passes extraArgs, extraEnv, config and extraObjects through', async () => {
    const docs = docsOf({
      values: {
        extraArgs: ['--log-level=debug'],
        extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' }],
        config: { approverWorkers: 9, logLevel: 'warn' },
        extraObjects: ['apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }],
      },
    });
    const deployment = findDoc(docs, 'Deployment');
    const c = controllerContainer(deployment);
    expect(c.args).toEqual(['controller', '--config=/etc/kube-identity/config/config.yaml', '--log-level=debug']);
    expect(c.env).toContainEqual({ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' });
    const config = await loadMountedConfig(deployment, docs);
    expect([config.approverWorkers, config.logLevel]).toEqual([9, 'warn']);
    expect(findDoc(docs, 'ConfigMap', 'kube-identity-extra')).toBeDefined();
    expect(findDoc(docs, 'Secret', 'x')).toBeDefined();
  });

  it('names objects after the release and changes the config checksum with the config', () => {
    const a = docsOf({ releaseName: 'ids' });
    expect((findDoc(a, 'Deployment').metadata as Obj).name).toBe('ids-kube-identity');
    expect(findDoc(a, 'ClusterRole', 'ids-kube-identity:signer')).toBeDefined();
    const checksum = (docs: Obj[]) => ((((findDoc(docs, 'Deployment').spec as Obj).template as Obj).metadata as Obj).annotations as Obj)['checksum/config'];
    expect(checksum(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(docsOf({ releaseName: 'ids', values: { logLevel: 'debug' } }))).not.toBe(checksum(a));
  });

  it('defaults to the image make image builds, pins it by digest, tag or appVersion, and requires one', () => {
    const image = (values: Obj) => controllerContainer(findDoc(docsOf({ values }), 'Deployment')).image;
    expect(image({})).toBe('kube-identity:dev');
    expect(image({ image: { repository: 'registry.example.com/kube-identity', tag: '' } })).toBe('registry.example.com/kube-identity:0.1.0');
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(image({ image: { repository: 'registry.example.com/kube-identity', digest } })).toBe(`registry.example.com/kube-identity@${digest}`);
    expect(() => render({ values: { image: { repository: '' } } })).toThrow(
      /image.repository is required: no kube-identity image is published. Build one with `make image` \(kube-identity:dev\), then `kind load docker-image kube-identity:dev` for kind, or push it to your registry/,
    );
  });
});
