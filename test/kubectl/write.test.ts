/**
 * kubectl 1.32 writes against the embedded server: patch (json, merge, strategic), label,
 * annotate, edit through KUBE_EDITOR, delete with --wait, create serviceaccount and token, and
 * certificate approve|deny.
 */
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import type { KObject } from '../../src/api/meta.js';
import { b64, csrPem } from '../csr/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, kubectlWith, type KubectlResult, manifest } from './kubectl.js';

let srv: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;

beforeAll(async () => {
  srv = await startTestServer();
  kubectl = kubectlFor(srv);
});

afterAll(async () => {
  await srv.close();
});

async function getJson(...args: string[]): Promise<KObject & Record<string, unknown>> {
  const out = await kubectl('get', ...args, '-o', 'json');
  expect(out.stderr).toBe('');
  return JSON.parse(out.stdout) as KObject & Record<string, unknown>;
}

const ok = (stdout: string): KubectlResult => ({ code: 0, stdout: `${stdout}\n`, stderr: '' });

it('patches with --type json, merge and strategic', async () => {
  expect(await kubectl('create', 'serviceaccount', 'p1')).toEqual(ok('serviceaccount/p1 created'));
  expect(await kubectl('patch', 'sa', 'p1', '--type', 'merge', '-p', '{"metadata":{"labels":{"a":"1"}},"secrets":[{"name":"s1"}]}')).toEqual(
    ok('serviceaccount/p1 patched'),
  );
  expect(await kubectl('patch', 'sa', 'p1', '--type', 'strategic', '-p', '{"secrets":[{"name":"s2"}]}')).toEqual(ok('serviceaccount/p1 patched'));
  expect(await kubectl('patch', 'sa', 'p1', '--type', 'json', '-p', '[{"op":"add","path":"/metadata/annotations","value":{"n":"v"}}]')).toEqual(
    ok('serviceaccount/p1 patched'),
  );
  const sa = await getJson('sa', 'p1');
  expect(sa.metadata).toMatchObject({ labels: { a: '1' }, annotations: { n: 'v' } });
  expect(sa.secrets).toEqual([{ name: 's2' }, { name: 's1' }]);

  expect(await kubectl('patch', 'sa', 'p1', '--type', 'merge', '-p', '{"metadata":{"labels":{"a":"1"}}}')).toEqual(
    ok('serviceaccount/p1 patched (no change)'),
  );
  const failed = await kubectl('patch', 'sa', 'nope', '--type', 'merge', '-p', '{}');
  expect(failed).toEqual({ code: 1, stdout: '', stderr: 'Error from server (NotFound): serviceaccounts "nope" not found\n' });
});

it('patch warns of fields the kind does not declare and does not store them (kubectl patch has no --validate)', async () => {
  expect((await kubectl('create', 'configmap', 'pv1', '--from-literal=k=v1')).stderr).toBe('');
  const res = await kubectl('patch', 'cm', 'pv1', '--type', 'merge', '-p', '{"bogus":1,"data":{"k":"v2"}}');
  expect(res).toEqual({ code: 0, stdout: 'configmap/pv1 patched\n', stderr: 'Warning: unknown field "bogus"\n' });
  const cm = await getJson('cm', 'pv1');
  expect(cm.data).toEqual({ k: 'v2' });
  expect(cm).not.toHaveProperty('bogus');
});

it('labels and annotates', async () => {
  expect((await kubectl('create', 'configmap', 'l1', '--from-literal=k=v')).stderr).toBe('');
  expect(await kubectl('label', 'cm', 'l1', 'team=a')).toEqual(ok('configmap/l1 labeled'));
  const clash = await kubectl('label', 'cm', 'l1', 'team=b');
  expect(clash).toEqual({ code: 1, stdout: '', stderr: "error: 'team' already has a value (a), and --overwrite is false\n" });
  expect(await kubectl('label', 'cm', 'l1', 'team=b', '--overwrite')).toEqual(ok('configmap/l1 labeled'));
  expect(await kubectl('annotate', 'cm', 'l1', 'note=hello')).toEqual(ok('configmap/l1 annotated'));
  expect((await getJson('cm', 'l1')).metadata).toMatchObject({ labels: { team: 'b' }, annotations: { note: 'hello' } });
  expect(await kubectl('label', 'cm', 'l1', 'team-')).toEqual(ok('configmap/l1 unlabeled'));
  expect((await getJson('cm', 'l1')).metadata?.labels).toBeUndefined();
});

it('edits through KUBE_EDITOR', async () => {
  expect((await kubectl('create', 'configmap', 'e1', '--from-literal=color=red')).stderr).toBe('');
  const editor = path.join(srv.dataDir, 'editor.sh');
  fs.writeFileSync(editor, '#!/bin/sh\nsed -i -e "s/color: red/color: blue/" "$1"\n', { mode: 0o755 });
  const edited = await kubectlWith(srv, ['edit', 'cm', 'e1'], { env: { KUBE_EDITOR: editor } });
  expect(edited).toEqual(ok('configmap/e1 edited'));
  expect((await getJson('cm', 'e1')).data).toEqual({ color: 'blue' });
  const unchanged = await kubectlWith(srv, ['edit', 'cm', 'e1'], { env: { KUBE_EDITOR: 'true' } });
  expect(unchanged).toEqual({ code: 0, stdout: '', stderr: 'Edit cancelled, no changes made.\n' });
});

it('deletes and waits, also for finalizers to go', async () => {
  expect((await kubectl('create', 'serviceaccount', 'd1')).stderr).toBe('');
  expect(await kubectl('delete', 'sa', 'd1', '--wait')).toEqual(ok('serviceaccount "d1" deleted'));
  expect((await kubectl('get', 'sa', 'd1')).stderr).toBe('Error from server (NotFound): serviceaccounts "d1" not found\n');
  expect(await kubectl('delete', 'sa', 'd1')).toEqual({ code: 1, stdout: '', stderr: 'Error from server (NotFound): serviceaccounts "d1" not found\n' });

  const file = manifest(srv, 'fin.json', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fin', namespace: 'default', finalizers: ['example.com/hold'] } });
  expect((await kubectl('create', '-f', file)).stderr).toBe('');
  const deleting = kubectl('delete', 'cm', 'fin', '--wait', '--timeout=20s');
  // The delete waits while the finalizer holds the object; removing it ends the wait.
  let marked = false;
  for (let i = 0; i < 100 && !marked; i++) {
    marked = (await getJson('cm', 'fin')).metadata?.deletionTimestamp !== undefined;
    if (!marked) await new Promise((r) => setTimeout(r, 50));
  }
  expect(marked).toBe(true);
  expect((await kubectl('patch', 'cm', 'fin', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]')).stderr).toBe('');
  expect(await deleting).toEqual(ok('configmap "fin" deleted'));
});

it('creates service accounts and tokens for them', async () => {
  expect(await kubectl('create', 'serviceaccount', 'bot')).toEqual(ok('serviceaccount/bot created'));
  const dup = await kubectl('create', 'serviceaccount', 'bot');
  expect(dup).toEqual({ code: 1, stdout: '', stderr: 'error: failed to create serviceaccount: serviceaccounts "bot" already exists\n' });
  const token = await kubectl('create', 'token', 'bot', '--audience', 'api', '--duration', '10m');
  expect(token.stderr).toBe('');
  const [, payload] = token.stdout.trim().split('.');
  const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  expect(claims).toMatchObject({ aud: ['api'], sub: 'system:serviceaccount:default:bot' });
  expect((claims.exp as number) - (claims.iat as number)).toBe(600);
  const missing = await kubectl('create', 'token', 'ghost');
  expect(missing).toEqual({ code: 1, stdout: '', stderr: 'error: failed to create token: serviceaccounts "ghost" not found\n' });
});

it('approves and denies CSRs', async () => {
  const csr = async (name: string): Promise<object> => ({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: b64(await csrPem()), signerName: 'example.com/signer', usages: ['client auth'] },
  });
  const file = manifest(srv, 'csrs.yaml', `${stringify(await csr('ok-1'))}---\n${stringify(await csr('no-1'))}`);
  expect((await kubectl('create', '-f', file)).stderr).toBe('');
  const [approved, denied] = await Promise.all([kubectl('certificate', 'approve', 'ok-1'), kubectl('certificate', 'deny', 'no-1')]);
  expect(approved).toEqual(ok('certificatesigningrequest.certificates.k8s.io/ok-1 approved'));
  expect(denied).toEqual(ok('certificatesigningrequest.certificates.k8s.io/no-1 denied'));
  const table = await kubectl('get', 'csr', 'ok-1', 'no-1', '--no-headers');
  expect(table.stdout).toMatch(/^ok-1\s.*\sApproved$/m);
  expect(table.stdout).toMatch(/^no-1\s.*\sDenied$/m);
  const conditions = (await getJson('csr', 'ok-1')).status as { conditions: { type: string; reason: string }[] };
  expect(conditions.conditions).toEqual([expect.objectContaining({ type: 'Approved', status: 'True', reason: 'KubectlApprove' })]);
});
