/**
 * The default policy at each start, as kube-apiserver's bootstrap-roles hook in its union form:
 * stored defaults marked autoupdate gain what they lack (a rule an operator removed, the signer
 * names `up`'s controller now runs with), one an operator marked autoupdate "false" is left alone,
 * and so are kube-identity's own non-default objects (the ClusterTrustBundle reader binding).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_CONTROLLER_POLICY_SCOPE, KUBE_IDENTITY_CONTROLLER_USER, type ControllerPolicyScope } from '../../src/apiserver/authorization/rbac/default-policy.js';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { raw, type RawTarget } from '../helpers/http.js';

const ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
const BINDINGS = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-rbac-reconcile-'));
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(workloadSigners: string[]): Promise<{ server: EmbeddedServer; target: RawTarget }> {
  const controllerPolicy: ControllerPolicyScope = { ...DEFAULT_CONTROLLER_POLICY_SCOPE, workloadSigners };
  const server = await startEmbeddedServer({ dataDir, storage: 'sqlite', port: 0, logger: silentLogger(), controllerPolicy });
  return { server, target: { url: server.url, caPem: server.credentials.caPem, admin: { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem } } };
}

async function maySign(target: RawTarget, signerName: string): Promise<boolean> {
  const review = await raw(target, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { spec: { user: KUBE_IDENTITY_CONTROLLER_USER, groups: ['system:authenticated'], resourceAttributes: { group: 'certificates.k8s.io', resource: 'signers', name: signerName, verb: 'sign' } } },
  });
  return review.json.status.allowed === true;
}

it('adds what a stored default lacks, keeps what an operator opted out of, and never takes a grant away', async () => {
  const first = await start(['example.com/a']);
  try {
    expect(await maySign(first.target, 'example.com/a')).toBe(true);
    expect(await maySign(first.target, 'example.com/b')).toBe(false);
    // An operator trims one default, opts another out of updates, and hides ClusterTrustBundles.
    const monitoring = (await raw(first.target, 'GET', `${ROLES}/system:monitoring`)).json;
    expect((await raw(first.target, 'PUT', `${ROLES}/system:monitoring`, { body: { ...monitoring, rules: [] } })).status).toBe(200);
    const info = (await raw(first.target, 'GET', `${ROLES}/system:public-info-viewer`)).json;
    const optedOut = { ...info, metadata: { ...info.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, rules: [] };
    expect((await raw(first.target, 'PUT', `${ROLES}/system:public-info-viewer`, { body: optedOut })).status).toBe(200);
    const reader = (await raw(first.target, 'GET', `${BINDINGS}/kube-identity:cluster-trust-bundle-reader`)).json;
    expect((await raw(first.target, 'PUT', `${BINDINGS}/kube-identity:cluster-trust-bundle-reader`, { body: { ...reader, subjects: [] } })).status).toBe(200);
  } finally {
    await first.server.close();
  }

  const second = await start(['example.com/b']);
  try {
    // The controller now runs example.com/b: granted at start. example.com/a stays (union, as upstream).
    expect(await maySign(second.target, 'example.com/b')).toBe(true);
    expect(await maySign(second.target, 'example.com/a')).toBe(true);
    const role = (await raw(second.target, 'GET', `${ROLES}/${KUBE_IDENTITY_CONTROLLER_USER}`)).json;
    expect(role.rules.filter((r: { resources?: string[] }) => r.resources?.includes('signers')).flatMap((r: { resourceNames: string[] }) => r.resourceNames)).toEqual(
      expect.arrayContaining(['example.com/a', 'example.com/b']),
    );
    // The trimmed default is whole again; the opted-out one and the non-default binding keep the operator's edit.
    const monitoring = (await raw(second.target, 'GET', `${ROLES}/system:monitoring`)).json;
    expect(monitoring.rules.flatMap((r: { nonResourceURLs?: string[] }) => r.nonResourceURLs ?? [])).toEqual(expect.arrayContaining(['/metrics', '/readyz', '/livez/*']));
    expect((await raw(second.target, 'GET', `${ROLES}/system:public-info-viewer`)).json.rules ?? []).toEqual([]);
    expect((await raw(second.target, 'GET', `${BINDINGS}/kube-identity:cluster-trust-bundle-reader`)).json.subjects ?? []).toEqual([]);
  } finally {
    await second.server.close();
  }
}, 60_000);
