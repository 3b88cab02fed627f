/**
 * The kustomize base, as `kubectl kustomize deploy/` renders it, passes kubectl's client-side dry run
 * (discovery plus OpenAPI validation) against the embedded server for every kind the server serves,
 * and a server-side dry run (validation, admission, no storage) creates nothing.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const NOT_SERVED = new Set(['Deployment', 'Service']);

let server: TestServer;
let manifests: string;
let namespaced: string;

beforeAll(async () => {
  server = await startTestServer();
  const { stdout } = await run('kubectl', ['kustomize', 'deploy/']);
  const docs = YAML.parseAllDocuments(stdout).map((d) => d.toJSON() as { kind: string });
  const render = (keep: (kind: string) => boolean): string =>
    docs
      .filter((d) => !NOT_SERVED.has(d.kind) && keep(d.kind))
      .map((d) => YAML.stringify(d))
      .join('---\n');
  manifests = render(() => true);
  namespaced = render((kind) => kind !== 'Namespace');
});
afterAll(() => server.close());

function kubectl(args: string[], input: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile('kubectl', ['--kubeconfig', server.kubeconfigPath, ...args], (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

it('validates with kubectl apply --dry-run=client', async () => {
  const { stdout, stderr } = await kubectl(['apply', '--dry-run=client', '-f', '-'], manifests);
  expect(stderr).toBe('');
  expect(stdout).toContain('namespace/kube-identity created (dry run)');
  expect(stdout).toContain('clusterrole.rbac.authorization.k8s.io/kube-identity:signer created (dry run)');
  expect(stdout).toContain('configmap/kube-identity-config created (dry run)');
});

it('validates with kubectl apply --dry-run=server and stores nothing', async () => {
  // As on a real cluster, namespaced objects need their namespace to exist for a server dry run.
  await kubectl(['create', 'namespace', 'kube-identity'], '');
  const before = server.store.currentRevision();
  const { stdout, stderr } = await kubectl(['apply', '--dry-run=server', '-f', '-'], namespaced);
  expect(stderr).toBe('');
  expect(stdout).toContain('serviceaccount/kube-identity created (server dry run)');
  expect(server.store.currentRevision()).toBe(before);
});
