/**
 * The whole embedded API server as `kube-identity apiserver` and `up` run it: a data directory
 * with the cluster CA and keys, the store, access control (x509, tokens, RBAC with the
 * default policy, TokenRequest/TokenReview, access reviews), the CSR API, issuer discovery and
 * OpenAPI-based field validation, and an admin kubeconfig.
 */
import path from 'node:path';
import { Registry } from 'prom-client';
import { registerProcessMetrics } from '../../metrics/registry.js';
import { nodeRestriction } from '../admission/node-restriction.js';
import { createAccessControl } from './access-control.js';
import { kubeadmAutoApproveBindings } from '../authorization/rbac/default-policy.js';
import { createPrivateFile, lockDataDir, securePrivateDir } from './data-dir.js';
import { adminTokenFile, ensureCredentials, CREDENTIAL_FILES, writeKubeconfig, type ServerCredentials } from './credentials.js';
import { unknownFields } from '../openapi/index.js';
import { objectReader } from '../registry/registries.js';
import { startApiServer, type ApiServerOptions } from './server.js';
import { Auditor, type AuditOptions } from '../audit/auditor.js';
import { EtcdStore, type EtcdStoreOptions } from '../storage/etcd/etcd.js';
import { MemoryStore } from '../storage/memory/memory.js';
import { SqliteStore } from '../storage/sqlite/sqlite.js';
import { storageKey, type Store } from '../storage/store.js';
import { RbacIndex } from '../authorization/rbac/rbac-index.js';
import type { Logger } from '../../log/logger.js';

function openSqlite(file: string): Promise<SqliteStore> {
  createPrivateFile(file);
  return SqliteStore.open(file);
}

export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface EmbeddedServerOptions {
  dataDir: string;
  logger: Logger;
  storage?: 'sqlite' | 'memory' | 'etcd';
  /** With storage 'etcd': the cluster. */
  etcd?: Omit<EtcdStoreOptions, 'ttlSeconds' | 'logger'>;
  /**
   * kube-apiserver's --event-ttl: how long an Event lives after its last write (on etcd its lease,
   * on the other stores a sweep deletes it). Absent: Events are kept.
   */
  eventTtlSeconds?: number;
  /** A ready store (tests); overrides `storage` and is closed with the server. */
  store?: Store;
  host?: string;
  /** 0 = any free port. */
  port?: number;
  bookmarkIntervalMs?: number;
  /** Where to write the admin kubeconfig (default DATA_DIR/kubeconfig). */
  kubeconfigOut?: string;
  /** More static tokens, as the CSV text of kube-apiserver's --token-auth-file (the admin token is always there). */
  tokenFile?: string;
  /** Service-account token issuer (kube-apiserver's --service-account-issuer). */
  issuer?: string;
  /**
   * kubeadm's bindings that let bootstrap-token nodes have their client CSRs auto-approved and
   * nodes renew their own; on by default, as on a kubeadm cluster.
   */
  kubeadmAutoApprove?: boolean;
  /** --anonymous-auth (default true): anonymous GETs of /healthz, /livez, /readyz and /version; every other anonymous request is 401. */
  anonymousAuth?: boolean;
  /** Where the server's metrics (served at /metrics) go; by default a registry of its own with process metrics. */
  metricsRegistry?: Registry;
  /** In-flight limits and priority levels (default: kube-apiserver's). */
  flowControl?: ApiServerOptions['flowControl'];
  /** The audit policy and backends; absent, nothing is audited. */
  audit?: AuditOptions;
}

export interface EmbeddedServer {
  url: string;
  port: number;
  dataDir: string;
  kubeconfigPath: string;
  credentials: ServerCredentials;
  /** The cluster CA files, for the signers of kube-apiserver-client*. */
  caCertFile: string;
  caKeyFile: string;
  store: Store;
  close(): Promise<void>;
}

/**
 * Makes the data directory private (warning once when it was not), claims it for this process
 * (DataDirInUseError when another one has it), then starts the server on it. On etcd the directory
 * only holds the CA and keys, which replicas share by design, so it is not claimed.
 */
export async function startEmbeddedServer(opts: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const dataDir = path.resolve(opts.dataDir);
  const tightened = securePrivateDir(dataDir);
  if (tightened.length > 0) {
    opts.logger.warn({ dataDir, paths: tightened }, 'data directory was readable by other users: made it private (directories 0700, files 0600, certificates 0644)');
  }
  const onEtcd = opts.storage === 'etcd' || opts.store instanceof EtcdStore;
  const unlock = onEtcd ? () => undefined : lockDataDir(dataDir);
  try {
    const server = await startOnDataDir(dataDir, opts);
    return { ...server, close: () => server.close().finally(unlock) };
  } catch (err) {
    unlock();
    throw err;
  }
}

async function startOnDataDir(dataDir: string, opts: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const host = opts.host ?? '127.0.0.1';
  const wildcard = host === '0.0.0.0' || host === '::';
  const credentials = await ensureCredentials(dataDir, wildcard ? [] : [host]);
  const store = opts.store ?? (await openStore(opts, dataDir));
  const rbacIndex = new RbacIndex(store);
  const access = await createAccessControl({
    objects: objectReader(store),
    rbacIndex,
    clientCaPem: credentials.caPem,
    tokenFile: adminTokenFile(credentials) + (opts.tokenFile ?? ''),
    serviceAccountKey: credentials.serviceAccountKeyPem,
    issuer: opts.issuer ?? DEFAULT_ISSUER,
    anonymous: opts.anonymousAuth ?? true,
  });
  const metricsRegistry = opts.metricsRegistry ?? defaultMetricsRegistry();
  const auditor = opts.audit && (await Auditor.create(opts.audit, metricsRegistry, opts.logger));
  const server = await startApiServer({
    store,
    logger: opts.logger,
    tls: { certPem: credentials.servingCertPem, keyPem: credentials.servingKeyPem, clientCaPem: credentials.caPem },
    host,
    port: opts.port ?? 0,
    authenticator: access.authenticator,
    authorizer: access.authorizer,
    extraStrategies: access.strategies,
    admission: [nodeRestriction()],
    metricsRegistry,
    auditor,
    defaultObjects: [...access.defaultObjects, ...(opts.kubeadmAutoApprove === false ? [] : kubeadmAutoApproveBindings())],
    staticRoutes: access.oidcRoutes,
    // The schema walker reports `.spec.foo`; decoders name fields without the leading dot.
    unknownFields: (gvk, obj) => unknownFields(obj, gvk.group, gvk.version, gvk.kind).map((p) => p.replace(/^\./, '')),
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
    rootCaPem: credentials.caPem,
    // On etcd the Events' leases expire them.
    eventTtlSeconds: store instanceof EtcdStore ? undefined : opts.eventTtlSeconds,
    flowControl: opts.flowControl,
  }).catch(async (err: unknown) => {
    await auditor?.close();
    throw err;
  });
  return {
    url: server.url,
    port: server.port,
    dataDir,
    kubeconfigPath: writeKubeconfig(dataDir, server.url, credentials, opts.kubeconfigOut ? path.resolve(opts.kubeconfigOut) : undefined),
    credentials,
    caCertFile: path.join(dataDir, CREDENTIAL_FILES.caPem),
    caKeyFile: path.join(dataDir, CREDENTIAL_FILES.caKeyPem),
    store,
    async close() {
      await server.close();
      rbacIndex.stop();
      await store.close();
    },
  };
}

async function openStore(opts: EmbeddedServerOptions, dataDir: string): Promise<Store> {
  if (opts.storage === 'memory') return new MemoryStore();
  if (opts.storage !== 'etcd') return openSqlite(path.join(dataDir, 'store.db'));
  if (!opts.etcd) throw new Error('storage etcd needs the etcd options');
  const ttl = opts.eventTtlSeconds;
  const events = [storageKey('', 'events', undefined), storageKey('events.k8s.io', 'events', undefined)];
  return EtcdStore.open({
    ...opts.etcd,
    ttlSeconds: (key) => (events.some((prefix) => key.startsWith(prefix)) ? ttl : undefined),
    logger: opts.logger.child({ component: 'etcd' }),
  });
}

function defaultMetricsRegistry(): Registry {
  const registry = new Registry();
  registerProcessMetrics(registry);
  return registry;
}
