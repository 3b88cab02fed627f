/**
 * Services as kubectl users meet them: `cluster-info` (it lists Services in kube-system and prints
 * where the control plane runs), the `kubernetes` Service kube-apiserver keeps in `default`,
 * `kubectl create service` of every type with cluster IPs and node ports allocated, the columns of
 * `kubectl get svc -o wide`, and upstream's validation errors.
 */
import { CONTROL_PLANE_TIMING } from '../../src/apiserver/controllers/apiserver-identity.js';
import { parseServiceIpRange } from '../../src/lib/service-range.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, manifest, type KubectlResult } from './kubectl.js';

let srv: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;

beforeAll(async () => {
  // The kubernetes Service is re-checked every 0.5 s here (10 s upstream), so its repair shows at once.
  srv = await startTestServer({ controlPlaneTiming: { ...CONTROL_PLANE_TIMING, intervalMs: 500 } });
  kubectl = kubectlFor(srv);
});
afterAll(() => srv.close());

const rows = (out: string): string[][] => out.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));

it('cluster-info prints where the control plane runs', async () => {
  const r = await kubectl('cluster-info');
  expect([r.code, r.stderr]).toEqual([0, '']);
  expect(r.stdout).toContain(`Kubernetes control plane is running at ${srv.url}`);
});

it('keeps the kubernetes Service in default, pointing at the API server port', async () => {
  const r = await kubectl('get', 'service', 'kubernetes', '-n', 'default', '-o', 'json');
  expect(r.code).toBe(0);
  const svc = JSON.parse(r.stdout) as { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
  expect(svc.metadata.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
  expect(svc.spec).toMatchObject({
    type: 'ClusterIP',
    clusterIP: '10.96.0.1',
    clusterIPs: ['10.96.0.1'],
    sessionAffinity: 'None',
    ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: Number(new URL(srv.url).port) }],
  });
  const table = rows((await kubectl('get', 'svc', '-n', 'default')).stdout);
  expect(table[0]).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
  expect(table[1]?.slice(0, 5)).toEqual(['kubernetes', 'ClusterIP', '10.96.0.1', '<none>', '443/TCP']);
});

it('creates Services of every type, allocating cluster IPs and node ports, and prints them as kubectl does', async () => {
  for (const args of [
    ['nodeport', 'web', '--tcp=80:8080'],
    ['loadbalancer', 'lb', '--tcp=443:8443'],
    ['clusterip', 'headless', '--clusterip=None'],
    ['externalname', 'ext', '--external-name=example.com'],
  ]) {
    const r = await kubectl('create', 'service', ...args, '-n', 'default');
    expect([r.code, r.stderr]).toEqual([0, '']);
  }
  const table = rows((await kubectl('get', 'svc', '-n', 'default', '-o', 'wide')).stdout);
  expect(table[0]).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR']);
  const byName = new Map(table.slice(1).map((row) => [row[0], row]));
  expect(byName.get('web')).toEqual(['web', 'NodePort', expect.stringMatching(/^10\.(9[6-9]|10\d|11[01])\.\d+\.\d+$/), '<none>', expect.stringMatching(/^80:3\d{4}\/TCP$/), expect.any(String), 'app=web']);
  expect(byName.get('lb')?.slice(1, 5)).toEqual(['LoadBalancer', expect.any(String), '<pending>', expect.stringMatching(/^443:3\d{4}\/TCP$/)]);
  expect(byName.get('headless')?.slice(1, 5)).toEqual(['ClusterIP', 'None', '<none>', '<none>']);
  expect(byName.get('ext')?.slice(1, 5)).toEqual(['ExternalName', '<none>', 'example.com', '<none>']);

  const web = JSON.parse((await kubectl('get', 'svc', 'web', '-n', 'default', '-o', 'json')).stdout) as { spec: Record<string, unknown> };
  expect(web.spec).toMatchObject({ externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
  // An update that leaves the cluster IP out keeps it; changing it is refused.
  const ip = web.spec.clusterIP as string;
  const relabel = await kubectl('label', 'svc', 'web', '-n', 'default', 'tier=front');
  expect(relabel.code).toBe(0);
  expect(JSON.parse((await kubectl('get', 'svc', 'web', '-n', 'default', '-o', 'json')).stdout)).toMatchObject({ spec: { clusterIP: ip } });
  const moved = await kubectl('patch', 'svc', 'web', '-n', 'default', '-p', '{"spec":{"clusterIP":"10.96.0.9","clusterIPs":["10.96.0.9"]}}');
  expect(moved.stderr).toContain('spec.clusterIPs[0]: Invalid value: "10.96.0.9": may not change once set');
});

it('refuses what kube-apiserver refuses, with its messages', async () => {
  const taken = await kubectl('create', 'service', 'clusterip', 'db', '--tcp=5432', '--clusterip=10.96.0.1', '-n', 'default');
  expect(taken.stderr).toContain(
    'Service "db" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is already allocated',
  );
  const file = manifest(srv, 'bad-svc.yaml', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'bad', namespace: 'default' },
    spec: { type: 'Fancy', ports: [{ port: 0, protocol: 'HTTP' }, { port: 80 }] },
  });
  const bad = await kubectl('create', '-f', file);
  expect(bad.code).toBe(1);
  for (const part of [
    'spec.type: Unsupported value: "Fancy": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    'spec.ports[0].name: Required value',
    'spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
    'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    'spec.ports[1].name: Required value',
  ]) {
    expect(bad.stderr).toContain(part);
  }
  expect((await kubectl('get', 'svc', 'bad', '-n', 'default')).code).toBe(1);
});

it('takes the trafficDistribution values of 1.37 (PreferSameZone, PreferSameNode beside PreferClose) and refuses others', async () => {
  const svc = (name: string, trafficDistribution: string): string =>
    manifest(srv, `${name}.yaml`, { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { ports: [{ port: 80 }], trafficDistribution } });
  for (const [name, value] of [['td-zone', 'PreferSameZone'], ['td-node', 'PreferSameNode'], ['td-close', 'PreferClose']] as const) {
    const made = await kubectl('create', '-f', svc(name, value));
    expect([made.code, made.stderr]).toEqual([0, '']);
    expect((await kubectl('get', 'svc', name, '-n', 'default', '-o', 'jsonpath={.spec.trafficDistribution}')).stdout).toBe(value);
  }
  const bad = await kubectl('create', '-f', svc('td-bad', 'Anywhere'));
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('spec.trafficDistribution: Unsupported value: "Anywhere": supported values: "PreferClose", "PreferSameNode", "PreferSameZone"');
});

it('puts the kubernetes Service back after it is deleted, as kube-apiserver does', async () => {
  expect((await kubectl('delete', 'service', 'kubernetes', '-n', 'default')).code).toBe(0);
  // The server re-checks it every 0.5 s (beforeAll).
  const deadline = Date.now() + 25_000;
  let back: KubectlResult;
  do {
    await new Promise((r) => setTimeout(r, 200));
    back = await kubectl('get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP} {.spec.ports[0].targetPort}');
  } while (back.code !== 0 && Date.now() < deadline);
  expect(back.stdout).toBe(`10.96.0.1 ${new URL(srv.url).port}`);
}, 40_000);

it('allocates from --service-cluster-ip-range: the kubernetes Service takes its first address, and an address outside it is refused', async () => {
  const other = await startTestServer({ serviceRange: parseServiceIpRange('10.100.0.0/16') });
  try {
    const kc = kubectlFor(other);
    expect((await kc('get', 'svc', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}')).stdout).toBe('10.100.0.1');
    expect((await kc('create', 'service', 'clusterip', 'in', '--tcp=80', '-n', 'default')).code).toBe(0);
    expect((await kc('get', 'svc', 'in', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}')).stdout).toMatch(/^10\.100\.\d+\.\d+$/);
    const out = await kc('create', 'service', 'clusterip', 'out', '--tcp=80', '--clusterip=10.96.0.10', '-n', 'default');
    expect(out.stderr).toContain(
      'failed to allocate IP 10.96.0.10: the provided IP (10.96.0.10) is not in the valid range. The range of valid IPs is 10.100.0.0/16',
    );
  } finally {
    await other.close();
  }
});
