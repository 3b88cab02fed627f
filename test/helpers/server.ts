/**
 * Starts a real API server over HTTPS on 127.0.0.1:0 for integration tests, with a fresh (or
 * given) data directory, its CA and admin kubeconfig, and a client-node KubeConfig ready to use.
 * By default it is the full embedded server (`startEmbeddedServer`: credentials, RBAC, CSR API);
 * tests of one layer may swap in their own authenticator, authorizer and strategies.
 * KUBE_IDENTITY_TEST_FRONTS=N serves every test server through N TLS front threads
 * (--tls-front-workers), so any suite can be run against the fronted connection path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { AuditOptions } from '../../src/apiserver/audit/auditor.js';
import type { Authenticator } from '../../src/apiserver/authentication/types.js';
import { ensureCredentials, writeKubeconfig } from '../../src/apiserver/server/credentials.js';
import { type ServiceRange } from '../../src/lib/service-range.js';
import { startEmbeddedServer, type EmbeddedServerOptions } from '../../src/apiserver/server/embedded.js';
import type { Strategy } from '../../src/apiserver/registry/generic/strategy.js';
import type { Authorizer } from '../../src/apiserver/authorization/authorizer.js';
import { startApiServer } from '../../src/apiserver/server/server.js';
import { FLOW_CONTROL_DEFAULTS } from '../../src/apiserver/flowcontrol/flow-control.js';
import type { SecureServingOptions } from '../../src/apiserver/server/secure-server.js';
import type { Credential } from './http.js';
import { ADMIN_USER, allowAllAuthorizer, staticTokenAuthenticator } from './static-auth.js';
import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import { SqliteStore } from '../../src/apiserver/storage/sqlite/sqlite.js';
import type { Store } from '../../src/apiserver/storage/store.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';

export interface TestServerOptions {
  storage?: 'memory' | 'sqlite';
  /** Reuse a data directory (kept on close); by default a temporary one is made and removed. */
  dataDir?: string;
  /** A ready store (overrides `storage`); closed with the server. */
  store?: Store;
  bookmarkIntervalMs?: number;
  /** Extra static tokens (token-file CSV) for the full assembly. */
  tokenFile?: string;
  /** --anonymous-auth of the full assembly (default true). */
  anonymousAuth?: boolean;
  /** --service-cluster-ip-range of the full assembly (default 10.96.0.0/12). */
  serviceRange?: ServiceRange;
  /** Giving any of these three starts a bare server with them instead of the full assembly. */
  extraStrategies?: Strategy[];
  authenticator?: Authenticator;
  authorizer?: Authorizer;
  logger?: Logger;
  /**
   * In-flight limits and queuing (default: kube-apiserver's). Shedding on the event loop's delay is
   * off unless asked for: the server shares its loop with the test, whose own blocking work (openssl
   * run synchronously, key generation) would read as the server's overload.
   */
  flowControl?: EmbeddedServerOptions['flowControl'];
  /** Audit policy and backends for the full assembly. */
  audit?: AuditOptions;
  /** HTTP/2 serving (--disable-http2-serving, --http2-max-streams-per-connection, --goaway-chance). */
  serving?: SecureServingOptions;
  /** --request-timeout (default 60 s). */
  requestDeadlineMs?: number;
  /** --etcd-count-metric-poll-period and --etcd-db-metric-poll-interval of the full assembly (default 1m and 30s). */
  countMetricPollPeriodMs?: number;
  dbMetricPollIntervalMs?: number;
  /** The identity Lease's and the kubernetes Service's periods (default upstream's: 10 s, 15 s, 1 h). */
  controlPlaneTiming?: EmbeddedServerOptions['controlPlaneTiming'];
}

export interface TestServer {
  url: string;
  kubeconfigPath: string;
  /** The admin (system:masters) client-certificate kubeconfig. */
  kubeConfig: KubeConfig;
  /**
   * How raw requests act as admin (system:masters): the admin kubeconfig's client certificate on the
   * full server, a bearer token of the static authenticator on a bare one.
   */
  admin: Credential;
  caPem: string;
  store: Store;
  dataDir: string;
  close(): Promise<void>;
}

/** A client-node KubeConfig for `server` that authenticates with a bearer token. */
export function tokenKubeConfig(server: { url: string; caPem: string }, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: server.url, caData: Buffer.from(server.caPem).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'user', token }],
    contexts: [{ name: 'test', cluster: 'test', user: 'user' }],
    currentContext: 'test',
  });
  return kc;
}

/** The serving options of a test, with the front threads KUBE_IDENTITY_TEST_FRONTS asks for unless it sets its own. */
function testServing(opts: TestServerOptions): SecureServingOptions {
  const fronts = Number(process.env.KUBE_IDENTITY_TEST_FRONTS ?? 0);
  return { tlsFrontWorkers: fronts, ...opts.serving };
}

/** The test's flow control: the server's defaults, without event-loop shedding unless the test sets it. */
function testFlowControl(opts: TestServerOptions): EmbeddedServerOptions['flowControl'] {
  return { ...FLOW_CONTROL_DEFAULTS, maxEventLoopDelayMs: 0, ...opts.flowControl };
}

async function startBare(opts: TestServerOptions, dataDir: string, store: Store) {
  const credentials = await ensureCredentials(dataDir);
  const token = randomBytes(16).toString('hex');
  const server = await startApiServer({
    store,
    logger: opts.logger ?? silentLogger(),
    tls: { certPem: credentials.servingCertPem, keyPem: credentials.servingKeyPem, clientCaPem: credentials.caPem },
    port: 0,
    authenticator: opts.authenticator ?? staticTokenAuthenticator(new Map([[token, ADMIN_USER]])),
    authorizer: opts.authorizer ?? allowAllAuthorizer,
    extraStrategies: opts.extraStrategies,
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
    flowControl: testFlowControl(opts),
    requestDeadlineMs: opts.requestDeadlineMs,
    ...testServing(opts),
  });
  const close = async (): Promise<void> => {
    await server.close();
    await store.close();
  };
  return { url: server.url, credentials, admin: { token }, kubeconfigPath: writeKubeconfig(dataDir, server.url, credentials), close };
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'kube-identity-test-'));
  const store = opts.store ?? (opts.storage === 'sqlite' ? await SqliteStore.open(path.join(dataDir, 'store.db')) : new MemoryStore());
  const custom = opts.authenticator !== undefined || opts.authorizer !== undefined || opts.extraStrategies !== undefined;
  const server = custom
    ? await startBare(opts, dataDir, store)
    : await startEmbeddedServer({
        dataDir,
        store,
        logger: opts.logger ?? silentLogger(),
        bookmarkIntervalMs: opts.bookmarkIntervalMs,
        tokenFile: opts.tokenFile,
        flowControl: testFlowControl(opts),
        audit: opts.audit,
        anonymousAuth: opts.anonymousAuth,
        serviceRange: opts.serviceRange,
        requestDeadlineMs: opts.requestDeadlineMs,
        countMetricPollPeriodMs: opts.countMetricPollPeriodMs,
        dbMetricPollIntervalMs: opts.dbMetricPollIntervalMs,
        controlPlaneTiming: opts.controlPlaneTiming,
        ...testServing(opts),
      });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(server.kubeconfigPath);
  return {
    url: server.url,
    kubeconfigPath: server.kubeconfigPath,
    kubeConfig,
    admin: 'admin' in server ? server.admin : { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem },
    caPem: server.credentials.caPem,
    store,
    dataDir,
    async close() {
      await server.close();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
