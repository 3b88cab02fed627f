/**
 * kubectl 1.32 reads against the embedded server: create -f of one object per listable kind, then
 * get in every output format, describe, explain, watch and the NotFound texts of a real cluster.
 */
import { stringify } from 'yaml';
import { RESOURCES } from '../../src/api/resources.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { KubectlStream, kubectlFor, type KubectlResult, manifest } from './kubectl.js';
import { NS, nameOf, resourceArg, type Sample, samples } from './objects.js';

let srv: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;
let objects: Sample[];

beforeAll(async () => {
  srv = await startTestServer();
  kubectl = kubectlFor(srv);
  objects = await samples();
  const file = manifest(srv, 'all.yaml', objects.map((o) => stringify(o.manifest)).join('---\n'));
  const created = await kubectl('create', '-f', file);
  expect(created.stderr).toBe('');
  expect(created.stdout.trim().split('\n')).toEqual(objects.map((o) => `${nameOf(o.info, o.name)} created`));
});

afterAll(async () => {
  await srv.close();
});

const where = (o: Sample): string[] => (o.info.namespaced ? ['-n', NS] : []);

it('covers every resource that can be listed', () => {
  const listable = RESOURCES.filter((r) => r.verbs.includes('list')).map(resourceArg).sort();
  expect(objects.map((o) => resourceArg(o.info)).sort()).toEqual(listable);
});

it('api-resources lists the served kinds', async () => {
  const out = await kubectl('api-resources', '--no-headers', '-o', 'name');
  expect(out.stderr).toBe('');
  const names = out.stdout.trim().split('\n');
  // One line per resource, in its preferred version: `plural.group`, whatever versions it is served in.
  for (const r of RESOURCES) expect(names).toContain(r.group ? `${r.plural}.${r.group}` : r.plural);
});

describe.each([0, 1, 2])('get on every kind (part %i)', (part) => {
  it('prints table, wide, name, json and yaml', async () => {
    const mine = objects.filter((_, i) => i % 3 === part);
    await Promise.all(
      mine.map(async (o) => {
        const args = ['get', resourceArg(o.info), o.name, ...where(o)];
        const [table, wide, name, json, yaml] = await Promise.all([
          kubectl(...args),
          kubectl(...args, '-o', 'wide'),
          kubectl(...args, '-o', 'name'),
          kubectl(...args, '-o', 'json'),
          kubectl(...args, '-o', 'yaml'),
        ]);
        for (const r of [table, wide, name, json, yaml]) expect({ kind: o.info.kind, stderr: r.stderr, code: r.code }).toEqual({ kind: o.info.kind, stderr: '', code: 0 });
        const [header, row, ...rest] = table.stdout.trim().split('\n');
        expect(rest).toEqual([]);
        const [wideHeader, wideRow] = wide.stdout.trim().split('\n');
        expect(wideHeader?.split(/\s{2,}/).length).toBeGreaterThanOrEqual(header?.split(/\s{2,}/).length ?? 0);
        if (o.info.kind === 'Event' && o.info.group === '') {
          // Core events print no NAME column, as upstream's printer does.
          expect(header).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
          expect(row).toMatch(/\sNormal\s+Started\s+pod\/p1\s+started$/);
          expect(wideRow).toMatch(/\sNormal\s+Started\s+pod\/p1\s/);
        } else if (o.info.kind === 'Event') {
          // events.k8s.io Events are the same stored Events, printed by the same printer.
          expect(header).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
          expect(row).toMatch(/\sNormal\s+Synced\s+pod\/p1$/);
          expect(wideRow).toMatch(/\sNormal\s+Synced\s+pod\/p1\s+example.com\/ctl, ctl-1\s/);
        } else {
          expect(header).toMatch(/^NAME\s/);
          expect(row?.split(/\s+/)[0]).toBe(o.name);
          expect(wideRow?.split(/\s+/)[0]).toBe(o.name);
        }
        expect(name.stdout.trim()).toBe(nameOf(o.info, o.name));
        const parsed = JSON.parse(json.stdout) as { kind: string; apiVersion: string; metadata: { name: string; uid: string } };
        expect(parsed).toMatchObject({ kind: o.info.kind, apiVersion: o.manifest.apiVersion, metadata: { name: o.name } });
        expect(yaml.stdout).toContain(`kind: ${o.info.kind}\n`);
        expect(yaml.stdout).toContain(`uid: ${parsed.metadata.uid}\n`);
        expect(yaml.stdout).not.toContain('managedFields');
      }),
    );
  });
});

it('prints the wide event columns of upstream printEvent with -o wide', async () => {
  const event = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'ev-wide', namespace: NS },
    involvedObject: { kind: 'Pod', name: 'p1', namespace: NS, fieldPath: 'spec.containers{app}' },
    reason: 'BackOff',
    message: 'restarting failed container ',
    type: 'Warning',
    source: { component: 'kubelet', host: 'node-1' },
    count: 3,
    firstTimestamp: new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    lastTimestamp: new Date(Date.now() - 900_000).toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  expect((await kubectl('create', '-f', manifest(srv, 'ev-wide.json', event))).stderr).toBe('');
  const [narrow, wide] = await Promise.all([
    kubectl('get', 'events', 'ev-wide', '-n', NS),
    kubectl('get', 'events', 'ev-wide', '-n', NS, '-o', 'wide'),
  ]);
  expect(narrow.stdout.trim().split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
  const [header, row] = wide.stdout.trim().split('\n');
  expect(header?.split(/\s{2,}/)).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME']);
  expect(row?.split(/\s{2,}/)).toEqual(['15m', 'Warning', 'BackOff', 'pod/p1', 'spec.containers{app}', 'kubelet, node-1', 'restarting failed container', '60m', '3', 'ev-wide']);
});

it('lists across namespaces with a NAMESPACE column', async () => {
  const out = await kubectl('get', 'serviceaccounts,configmaps', '-A');
  expect(out.stderr).toBe('');
  expect(out.stdout).toMatch(/^NAMESPACE\s+NAME\s+SECRETS\s+AGE$/m);
  expect(out.stdout).toMatch(new RegExp(`^${NS}\\s+serviceaccount/sa1\\s+0\\s+\\S+$`, 'm'));
  expect(out.stdout).toMatch(new RegExp(`^${NS}\\s+configmap/cm1\\s+1\\s+\\S+$`, 'm'));
});

it('answers missing objects and kinds with the texts of a real cluster', async () => {
  const [sa, csr, kind, empty] = await Promise.all([
    kubectl('get', 'sa', 'nope'),
    kubectl('get', 'csr', 'nope'),
    kubectl('get', 'widgets'),
    kubectl('get', 'leases', '-n', 'default'),
  ]);
  expect(sa).toEqual({ code: 1, stdout: '', stderr: 'Error from server (NotFound): serviceaccounts "nope" not found\n' });
  expect(csr.stderr).toBe('Error from server (NotFound): certificatesigningrequests.certificates.k8s.io "nope" not found\n');
  expect(kind.stderr).toBe('error: the server doesn\'t have a resource type "widgets"\n');
  expect(empty).toEqual({ code: 0, stdout: '', stderr: 'No resources found in default namespace.\n' });
});

it('describes a service account and a CSR', async () => {
  const [sa, csr] = await Promise.all([kubectl('describe', 'sa', 'sa1', '-n', NS), kubectl('describe', 'csr', 'kt-csr1')]);
  expect(sa.stderr).toBe('');
  expect(sa.stdout).toMatch(/^Name:\s+sa1$/m);
  expect(sa.stdout).toMatch(new RegExp(`^Namespace:\\s+${NS}$`, 'm'));
  expect(sa.stdout).toMatch(/^Mountable secrets:\s+<none>$/m);
  expect(csr.stderr).toBe('');
  expect(csr.stdout).toMatch(/^Name:\s+kt-csr1$/m);
  expect(csr.stdout).toMatch(/^Signer:\s+example\.com\/signer$/m);
  expect(csr.stdout).toMatch(/^Status:\s+Pending$/m);
  expect(csr.stdout).toMatch(/Common Name:\s+system:node:worker-1/);
});

it('explains kinds and fields from the OpenAPI document', async () => {
  const [sa, field] = await Promise.all([kubectl('explain', 'serviceaccount'), kubectl('explain', 'csr.status.conditions')]);
  expect(sa.stderr).toBe('');
  expect(sa.stdout).toMatch(/^KIND:\s+ServiceAccount$/m);
  expect(sa.stdout).toMatch(/^VERSION:\s+v1$/m);
  expect(sa.stdout).toMatch(/^\s+automountServiceAccountToken\s+<boolean>$/m);
  expect(field.stderr).toBe('');
  expect(field.stdout).toMatch(/^FIELD: conditions <\[\]CertificateSigningRequestCondition>$/m);
  expect(field.stdout).toMatch(/^\s+type\s+<string> -required-$/m);
  const [spec, series] = await Promise.all([kubectl('explain', 'csr.spec'), kubectl('explain', 'events.series', '--api-version=events.k8s.io/v1')]);
  expect(spec.stdout).toMatch(/^FIELD: spec <CertificateSigningRequestSpec>$/m);
  expect(series.stdout).toMatch(/^FIELD: series <EventSeries>$/m);
});

it('get -w prints the initial table and then an event for a new object', async () => {
  const watch = new KubectlStream(srv, ['get', 'configmaps', '-n', NS, '-w']);
  try {
    const initial = await watch.waitForLines(3);
    expect(initial[0]).toMatch(/^NAME\s+DATA\s+AGE$/);
    expect(initial[1]).toMatch(/^cm1\s+1\s+\S+$/);
    expect(initial[2]).toMatch(/^kube-root-ca\.crt\s+1\s+\S+$/);
    const created = await kubectl('create', 'configmap', 'watched', '-n', NS, '--from-literal=a=1', '--from-literal=b=2');
    expect(created.stderr).toBe('');
    const lines = await watch.waitForLines(4);
    expect(lines[3]).toMatch(/^watched\s+2\s+\S+$/);
    expect(watch.stderr).toBe('');
  } finally {
    await watch.stop();
  }
});
