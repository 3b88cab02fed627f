/**
 * kubectl apply against the embedded server: client-side (strategic merge patch plus the
 * last-applied annotation) and server-side (apply patches, field managers, conflicts, force).
 */
import type { KObject } from '../../src/api/meta.js';
import { b64, csrPem } from '../csr/helpers.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, type KubectlResult, manifest } from './kubectl.js';

let srv: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;

beforeAll(async () => {
  srv = await startTestServer();
  kubectl = kubectlFor(srv);
});

afterAll(async () => {
  await srv.close();
});

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

async function getJson(...args: string[]): Promise<KObject> {
  const out = await kubectl('get', ...args, '-o', 'json', '--show-managed-fields');
  expect(out.stderr).toBe('');
  return JSON.parse(out.stdout) as KObject;
}

const owners = (obj: KObject): Record<string, unknown> =>
  Object.fromEntries((obj.metadata?.managedFields ?? []).map((e) => [`${e.manager ?? ''}/${e.operation ?? ''}`, e.fieldsV1]));

const configMap = (name: string, data: Record<string, string>, labels?: Record<string, string>): object => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) },
  data,
});

describe('client-side apply', () => {
  it('creates, configures by three-way merge and reports unchanged', async () => {
    const file = manifest(srv, 'csa.yaml', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'csa', namespace: 'default', labels: { tier: 'a' } },
      automountServiceAccountToken: true,
      secrets: [{ name: 's1' }],
    });
    expect(await kubectl('apply', '-f', file)).toEqual({ code: 0, stdout: 'serviceaccount/csa created\n', stderr: '' });
    let sa = await getJson('sa', 'csa');
    expect(JSON.parse(sa.metadata?.annotations?.[LAST_APPLIED] ?? '{}')).toMatchObject({ metadata: { name: 'csa', labels: { tier: 'a' } } });
    expect(owners(sa)).toHaveProperty(['kubectl-client-side-apply/Update']);

    // Someone else adds a label: a three-way merge keeps it, drops what the manifest no longer has.
    expect((await kubectl('label', 'sa', 'csa', 'other=kept')).stderr).toBe('');
    manifest(srv, 'csa.yaml', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'csa', namespace: 'default', labels: { tier: 'b' } },
      secrets: [{ name: 's1' }, { name: 's2' }],
    });
    expect(await kubectl('apply', '-f', file)).toEqual({ code: 0, stdout: 'serviceaccount/csa configured\n', stderr: '' });
    sa = await getJson('sa', 'csa');
    expect(sa.metadata?.labels).toEqual({ tier: 'b', other: 'kept' });
    expect(sa).not.toHaveProperty('automountServiceAccountToken');
    expect((sa as { secrets?: unknown }).secrets).toEqual([{ name: 's1' }, { name: 's2' }]);

    expect(await kubectl('apply', '-f', file)).toEqual({ code: 0, stdout: 'serviceaccount/csa unchanged\n', stderr: '' });
  });
});

describe('server-side apply', () => {
  it('creates, then conflicts between two managers until forced', async () => {
    const file = manifest(srv, 'ssa.json', configMap('ssa', { key: 'one', mine: 'x' }));
    expect(await kubectl('apply', '--server-side', '-f', file)).toEqual({ code: 0, stdout: 'configmap/ssa serverside-applied\n', stderr: '' });
    let cm = await getJson('cm', 'ssa');
    expect(owners(cm)).toEqual({ 'kubectl/Apply': { 'f:data': { 'f:key': {}, 'f:mine': {} } } });

    const other = manifest(srv, 'ssa-other.json', configMap('ssa', { key: 'two' }));
    const conflict = await kubectl('apply', '--server-side', '--field-manager=other', '-f', other);
    expect(conflict.code).toBe(1);
    expect(conflict.stdout).toBe('');
    expect(conflict.stderr.split('\n')[0]).toBe('error: Apply failed with 1 conflict: conflict with "kubectl": .data.key');
    expect(conflict.stderr).toContain('--force-conflicts');

    const forced = await kubectl('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', other);
    expect(forced).toEqual({ code: 0, stdout: 'configmap/ssa serverside-applied\n', stderr: '' });
    cm = await getJson('cm', 'ssa');
    expect((cm as { data?: unknown }).data).toEqual({ key: 'two', mine: 'x' });
    expect(owners(cm)).toEqual({ 'kubectl/Apply': { 'f:data': { 'f:mine': {} } }, 'other/Apply': { 'f:data': { 'f:key': {} } } });

    // The first manager drops `mine` (it alone owns it, so it goes) and no longer claims `key`.
    manifest(srv, 'ssa.json', configMap('ssa', {}, { app: 'ssa' }));
    expect((await kubectl('apply', '--server-side', '-f', file)).stderr).toBe('');
    cm = await getJson('cm', 'ssa');
    expect((cm as { data?: unknown }).data).toEqual({ key: 'two' });
    expect(cm.metadata?.labels).toEqual({ app: 'ssa' });
  });

  it('conflicts with an Update manager as "<name>" using <apiVersion>', async () => {
    expect((await kubectl('create', 'configmap', 'upd', '--from-literal=k=v')).stderr).toBe('');
    const file = manifest(srv, 'upd.json', configMap('upd', { k: 'changed' }));
    const conflict = await kubectl('apply', '--server-side', '-f', file);
    expect(conflict.stderr.split('\n')[0]).toBe('error: Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.k');
  });

  it('moves from client-side to server-side apply without conflicts', async () => {
    const file = manifest(srv, 'mig.json', configMap('mig', { a: '1' }));
    expect((await kubectl('apply', '-f', file)).stderr).toBe('');
    manifest(srv, 'mig.json', configMap('mig', { a: '2' }));
    expect(await kubectl('apply', '--server-side', '-f', file)).toEqual({ code: 0, stdout: 'configmap/mig serverside-applied\n', stderr: '' });
    const cm = await getJson('cm', 'mig');
    expect((cm as { data?: unknown }).data).toEqual({ a: '2' });
    expect(Object.keys(owners(cm))).toContain('kubectl/Apply');
    // The last-applied annotation follows, so client-side apply keeps working from the new base.
    expect(JSON.parse(cm.metadata?.annotations?.[LAST_APPLIED] ?? '{}')).toMatchObject({ data: { a: '2' } });
    manifest(srv, 'mig.json', configMap('mig', { b: '3' }));
    expect(await kubectl('apply', '-f', file)).toEqual({ code: 0, stdout: 'configmap/mig configured\n', stderr: '' });
    expect((await getJson('cm', 'mig') as { data?: unknown }).data).toEqual({ b: '3' });
  });

  it('answers a server dry run without persisting', async () => {
    const file = manifest(srv, 'dry.json', configMap('dry', { a: '1' }));
    expect(await kubectl('apply', '--server-side', '--dry-run=server', '-f', file)).toEqual({
      code: 0,
      stdout: 'configmap/dry serverside-applied (server dry run)\n',
      stderr: '',
    });
    expect((await kubectl('get', 'cm', 'dry')).stderr).toBe('Error from server (NotFound): configmaps "dry" not found\n');
  });
});

describe('apply patches over the wire', () => {
  const APPLY = 'application/apply-patch+yaml';
  const cmPath = (name: string, query = '?fieldManager=wire'): string => `/api/v1/namespaces/default/configmaps/${name}${query}`;

  it('requires a fieldManager', async () => {
    const res = await raw(srv, 'PATCH', cmPath('wire', ''), { body: '{}', contentType: APPLY });
    expect(res.status).toBe(422);
    expect(res.json.message).toBe('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  });

  it('creates from YAML with 201, updates with 200 and answers conflicts with causes', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wire\ndata:\n  k: v\n';
    const created = await raw(srv, 'PATCH', cmPath('wire'), { body: yaml, contentType: APPLY });
    expect(created.status).toBe(201);
    expect(created.json.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: 'wire', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:k': {} } } }),
    ]);
    const again = await raw(srv, 'PATCH', cmPath('wire'), { body: yaml.replace('k: v', 'k: v\n  j: w'), contentType: APPLY });
    expect(again.status).toBe(200);
    expect(again.json.data).toEqual({ k: 'v', j: 'w' });

    const clash = await raw(srv, 'PATCH', cmPath('wire', '?fieldManager=rival&force=false'), { body: yaml.replace('k: v', 'k: x'), contentType: APPLY });
    expect(clash.status).toBe(409);
    expect(clash.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "wire": .data.k',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "wire"', field: '.data.k' }] },
      code: 409,
    });

    // Applying the same value shares ownership, so the field outlives the first applier dropping it.
    const shared = await raw(srv, 'PATCH', cmPath('wire', '?fieldManager=rival'), { body: yaml, contentType: APPLY });
    expect(shared.status).toBe(200);
    expect(shared.json.metadata.managedFields.map((e: { manager: string }) => e.manager)).toEqual(['wire', 'rival']);
    const dropped = await raw(srv, 'PATCH', cmPath('wire'), { body: yaml.replace('k: v', 'j: w'), contentType: APPLY });
    expect(dropped.json.data).toEqual({ k: 'v', j: 'w' });
    const gone = await raw(srv, 'PATCH', cmPath('wire', '?fieldManager=rival'), { body: yaml.replace('k: v', 'j: w'), contentType: APPLY });
    expect(gone.json.data).toEqual({ j: 'w' });
  });

  it('merges CSR status conditions by type through the status subresource', async () => {
    const csr = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'ssa-csr' },
      spec: { request: b64(await csrPem()), signerName: 'example.com/signer', usages: ['client auth'] },
    };
    expect((await raw(srv, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { body: csr })).status).toBe(201);
    const statusPath = '/apis/certificates.k8s.io/v1/certificatesigningrequests/ssa-csr/status?fieldManager=';
    const condition = (type: string): object => ({ type, status: 'True', reason: 'Test', message: type });
    const apply = (manager: string, type: string) =>
      raw(srv, 'PATCH', statusPath + manager, {
        body: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', status: { conditions: [condition(type)] } },
        contentType: APPLY,
      });
    expect((await apply('one', 'Failed')).status).toBe(200);
    const res = await apply('two', 'Custom');
    expect(res.status).toBe(200);
    expect(res.json.status.conditions.map((c: { type: string }) => c.type)).toEqual(['Failed', 'Custom']);
    const entries = res.json.metadata.managedFields as { manager: string; subresource?: string }[];
    expect(entries.filter((e) => e.subresource === 'status').map((e) => e.manager)).toEqual(['one', 'two']);
  });
});
