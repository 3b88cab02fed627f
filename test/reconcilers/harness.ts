/**
 * The full embedded API server (startTestServer: identity, RBAC, CSR API) with a few token-file
 * users, plus the real CSR controllers on a Manager. The signer CA for the
 * Kubernetes signers is the server's own client CA, so issued kubelet certificates log in over mTLS.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import type { CertificateSigningRequest } from '../../src/api/certificates.js';
import { KUBEADM_NODE_TOKEN_GROUP } from '../../src/apiserver/authorization/rbac/default-policy.js';
import { loadControllerConfig } from '../../src/config/load.js';
import type { ConfigKey } from '../../src/config/schema.js';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { Manager } from '../../src/controller/runtime/manager.js';
import { registerControllers, type Registered, type RegisterDeps } from '../../src/controller/register.js';
import { realClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { createCertificateRequestPem, type CreateCsrOptions } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { raw } from '../helpers/http.js';
import { startTestServer, tokenKubeConfig, type TestServer } from '../helpers/server.js';

export const BOOTSTRAP_TOKEN = 'abcdef.0123456789abcdef';

/**
 * Token-file users (the controller as admin, a CSR creator without nodeclient rights, a node) and
 * bootstrap tokens: kubeadm's node-join token, one made for something else, and one whose group an
 * operator allowed to create CSRs (system:node-bootstrapper) but not to join nodes.
 */
export const TOKENS = {
  admin: 'admin-token',
  alice: 'alice-token',
  node9: 'node9-token',
  bootstrap: BOOTSTRAP_TOKEN,
  stray: 'ghijkl.0123456789abcdef',
  tools: 'mnopqr.0123456789abcdef',
} as const;
export const TOOLS_GROUP = 'system:bootstrappers:worker-tools';

/** Bootstrap token secrets by token, with the auth-extra-groups each carries. */
const BOOTSTRAP_TOKENS: [string, string | undefined][] = [
  [TOKENS.bootstrap, KUBEADM_NODE_TOKEN_GROUP],
  [TOKENS.stray, undefined],
  [TOKENS.tools, TOOLS_GROUP],
];
export type Who = keyof typeof TOKENS;

const TOKEN_FILE = [
  `${TOKENS.admin},admin,uid-admin,"system:masters"`,
  `${TOKENS.alice},alice,uid-alice,"csr-creators"`,
  `${TOKENS.node9},system:node:worker-9,uid-node9,"system:nodes,csr-creators"`,
].join('\n');

export interface Harness {
  server: TestServer;
  caDir: string;
  /** The server's client CA files (signer CA of the Kubernetes signers). */
  caFiles: { certFile: string; keyFile: string };
  call(who: Who | { token: string } | { certPem: string; keyPem: string }, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** `extraTokens`: more token-file lines (`token,user,uid,"groups"`), for identities one suite needs. */
export async function startHarness(extraTokens: string[] = []): Promise<Harness> {
  const caDir = mkdtempSync(path.join(os.tmpdir(), 'kid-reconcilers-ca-'));
  const server = await startTestServer({ tokenFile: [TOKEN_FILE, ...extraTokens].join('\n') });
  const call: Harness['call'] = async (who, method, urlPath, body) => {
    const auth = typeof who === 'string' ? { token: TOKENS[who] } : 'token' in who ? { token: who.token } : { client: who };
    const res = await raw(server, method, urlPath, { body, ...auth });
    return { status: res.status, body: (res.json ?? {}) as Record<string, unknown> };
  };
  const creators = await call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'csr-creators' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-bootstrapper' },
    subjects: ['csr-creators', TOOLS_GROUP].map((name) => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name })),
  });
  if (creators.status !== 201) throw new Error(`csr-creators binding: ${JSON.stringify(creators.body)}`);
  for (const [token, extraGroups] of BOOTSTRAP_TOKENS) {
    const [tokenId, tokenSecret] = token.split('.') as [string, string];
    const stringData: Record<string, string> = { 'token-id': tokenId, 'token-secret': tokenSecret, 'usage-bootstrap-authentication': 'true' };
    if (extraGroups) stringData['auth-extra-groups'] = extraGroups;
    const secret = await call('admin', 'POST', '/api/v1/namespaces/kube-system/secrets', {
      metadata: { name: `bootstrap-token-${tokenId}` },
      type: 'bootstrap.kubernetes.io/token',
      stringData,
    });
    if (secret.status !== 201) throw new Error(`bootstrap token secret: ${JSON.stringify(secret.body)}`);
  }
  return {
    server,
    caDir,
    caFiles: { certFile: path.join(server.dataDir, 'ca.crt'), keyFile: path.join(server.dataDir, 'ca.key') },
    call,
    async close() {
      await server.close();
      rmSync(caDir, { recursive: true, force: true });
    },
  };
}

export interface RunningController {
  registered: Registered;
  registry: Registry;
  client: KubeClient;
  stop(): Promise<void>;
}

/**
 * The real controllers (no leader election) with the given options on top of test-friendly defaults,
 * as the admin or as whoever `token` authenticates, through `url` (the server's own by default).
 */
export async function startController(
  h: Harness,
  flags: Partial<Record<ConfigKey, unknown>>,
  more: Pick<RegisterDeps, 'eventSink' | 'resolveHost'> = {},
  token: string = TOKENS.admin,
  url: string = h.server.url,
): Promise<RunningController> {
  const config = await loadControllerConfig({
    flags: { leaderElect: 'false', rateLimiterBaseDelay: '20ms', rateLimiterMaxDelay: '500ms', caReloadInterval: '200ms', cleanerInterval: '24h', ...flags },
  });
  const kc = tokenKubeConfig({ url, caPem: h.server.caPem }, token);
  const registry = new Registry();
  const logger = silentLogger();
  const client = new KubeClient({ kubeConfig: kc, clock: realClock });
  const mgr = new Manager({ client, logger, registry, clock: realClock, gracefulShutdownMs: 2000 });
  const stop = new AbortController();
  const registered = await registerControllers(mgr, client, config, { registry, logger, clock: realClock, signal: stop.signal, ...more });
  const run = mgr.run(stop.signal);
  return {
    registered,
    registry,
    client,
    async stop() {
      stop.abort();
      await run;
    },
  };
}

export { waitFor } from '../helpers/wait.js';

export interface NewCsr {
  name: string;
  signerName: string;
  usages: string[];
  expirationSeconds?: number;
  subject: Omit<CreateCsrOptions, 'privateKeyPem'>;
}

/** Creates a CSR as `who` with a fresh P-256 key; returns the key and the server's reply. */
export async function createCsr(h: Harness, who: Who, c: NewCsr): Promise<{ keyPem: string; status: number; body: Record<string, unknown> }> {
  const { privateKeyPem } = generateKeyPair('ECDSA-P256');
  const pem = await createCertificateRequestPem({ privateKeyPem, ...c.subject });
  const spec: Record<string, unknown> = { request: Buffer.from(pem).toString('base64'), signerName: c.signerName, usages: c.usages };
  if (c.expirationSeconds !== undefined) spec.expirationSeconds = c.expirationSeconds;
  const res = await h.call(who, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { metadata: { name: c.name }, spec });
  return { keyPem: privateKeyPem, ...res };
}

export async function getCsr(h: Harness, name: string): Promise<CertificateSigningRequest> {
  const res = await h.call('admin', 'GET', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`);
  if (res.status !== 200) throw new Error(`get ${name}: ${res.status}`);
  return res.body as unknown as CertificateSigningRequest;
}

/** Approves like `kubectl certificate approve`. */
export async function approve(h: Harness, name: string): Promise<void> {
  const csr = await getCsr(h, name);
  const conditions = [...(csr.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'This CSR was approved by kubectl certificate approve.' }];
  const res = await h.call('admin', 'PUT', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}/approval`, { ...csr, status: { ...csr.status, conditions } });
  if (res.status !== 200) throw new Error(`approve ${name}: ${JSON.stringify(res.body)}`);
}

export const certificateOf = (csr: CertificateSigningRequest): string => Buffer.from(csr.status?.certificate ?? '', 'base64').toString('latin1');
