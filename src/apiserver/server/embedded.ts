/**
 * The whole embedded API server as `kube-identity apiserver` and `up` run it: a data directory
 * with the cluster CA and keys, the store, access control (x509, tokens, RBAC with the
 * default policy, TokenRequest/TokenReview, access reviews), the CSR API, issuer discovery and
 * OpenAPI-based field validation, and an admin kubeconfig.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Registry } from 'prom-client';
import { registerProcessMetrics } from '../../metrics/registry.js';
import { createAccessControl } from './access-control.js';
import { kubeadmAutoApproveBindings, type ControllerPolicyScope } from '../authorization/rbac/default-policy.js';
import { createPrivateFile, lockDataDir, securePrivateDir } from './data-dir.js';
import { adminCertificateExpiry, ensureCredentials, CREDENTIAL_FILES, RETIRED_ADMIN_TOKEN_FILE, writeKubeconfig, type ServerCredentials } from './credentials.js';
import { objectReader } from '../registry/registries.js';
import type { CloseOptions } from './connection-serving.js';
import { startApiServer, type ApiServerOptions } from './server.js';
import { Auditor, type AuditOptions } from '../audit/auditor.js';
import type { EtcdStoreOptions } from '../storage/etcd/etcd.js';
import { MemoryStore } from '../storage/memory/memory.js';
import { SqliteStore } from '../storage/sqlite/sqlite.js';
import { storageKey, type Store } from '../storage/store.js';
import { RbacIndex } from '../authorization/rbac/rbac-index.js';
import { NodeGraph } from '../authorization/node/node-graph.js';
import { BootstrapTokenSecrets } from '../authentication/bootstrap-token-secrets.js';
import { EncryptionAtRest } from '../encryption/at-rest.js';
import { ensureDefaultEncryptionConfig } from '../encryption/default-config.js';
import type { KmsTimings } from '../encryption/kms-envelope.js';
import type { ValueTransformer } from '../storage/value-transformer.js';
import type { Logger } from '../../log/logger.js';
import type { TlsSettings } from '../../pki/tls-options.js';

function openSqlite(file: string, transformer: ValueTransformer | undefined): Promise<SqliteStore> {
  createPrivateFile(file);
  return SqliteStore.open(file, { transformer });
}

/** How long before the admin certificate expires the server starts saying so at each start. */
const ADMIN_RENEW_WARNING_DAYS = 30;

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
  /** Static tokens, as the CSV text of kube-apiserver's --token-auth-file (none by default: admin is a client certificate). */
  tokenFile?: string;
  /** Service-account token issuer (kube-apiserver's --service-account-issuer). */
  issuer?: string;
  /**
   * kubeadm's bindings that let bootstrap-token nodes have their client CSRs auto-approved and
   * nodes renew their own; on by default, as on a kubeadm cluster.
   */
  kubeadmAutoApprove?: boolean;
  /**
   * Serving TLS as kube-apiserver's flags give it: the certificate and key files (default the data
   * directory's, made at first start), re-read when they change, and Go's version and suite names.
   */
  tls?: Partial<TlsSettings> & { certFile?: string; keyFile?: string };
  /** --anonymous-auth (default true): anonymous GETs of /healthz, /livez, /readyz and /version; every other anonymous request is 401. */
  anonymousAuth?: boolean;
  /** Where the server's metrics (served at /metrics) go; by default a registry of its own with process metrics. */
  metricsRegistry?: Registry;
  /** In-flight limits and priority levels (default: kube-apiserver's). */
  flowControl?: ApiServerOptions['flowControl'];
  /** --request-timeout (default 60 s). */
  requestDeadlineMs?: number;
  /** Checks of /healthz and /readyz besides the store's and the KMS providers' (up's `controller`). */
  healthChecks?: ApiServerOptions['healthChecks'];
  /** --service-cluster-ip-range (default 10.96.0.0/12). */
  serviceRange?: ApiServerOptions['serviceRange'];
  /** The audit policy and backends; absent, nothing is audited. */
  audit?: AuditOptions;
  /** kube-apiserver's --encryption-provider-config: an EncryptionConfiguration file. */
  encryptionProviderConfig?: string;
  /** --encryption-provider-config-automatic-reload: take the file's changes while running. */
  encryptionProviderConfigAutomaticReload?: boolean;
  /**
   * `up`'s default when no --encryption-provider-config is given: Secrets encrypted with a key
   * generated into DATA_DIR/encryption-config.yaml.
   */
  encryptSecretsByDefault?: boolean;
  /** KMS v2 poll intervals and lifetimes (upstream's by default; tests shorten them). */
  kmsTimings?: KmsTimings;
  /**
   * kube-apiserver's --client-ca-file: the CAs whose client certificates authenticate (PEM bundle).
   * Default: the data directory's cluster CA, which signs the client signers' certificates under
   * `up`; never the kubelet-serving CA.
   */
  clientCaPem?: string;
  /** What `up`'s controller runs with: the RBAC of its identity, system:kube-identity-controller (default: up's defaults). */
  controllerPolicy?: ControllerPolicyScope;
  /** --disable-http2-serving: HTTP/1.1 only. */
  disableHttp2?: boolean;
  /** --http2-max-streams-per-connection (0: 100). */
  http2MaxStreamsPerConnection?: number;
  /** --goaway-chance (default 0). */
  goawayChance?: number;
  /** --tls-front-workers (default 0: this thread accepts and does TLS). */
  tlsFrontWorkers?: number;
  /** --etcd-count-metric-poll-period (default 1m; 0 disables apiserver_storage_objects). */
  countMetricPollPeriodMs?: ApiServerOptions['countMetricPollPeriodMs'];
  /** --etcd-db-metric-poll-interval (default 30s; 0 disables apiserver_storage_db_total_size_in_bytes). */
  dbMetricPollIntervalMs?: ApiServerOptions['dbMetricPollIntervalMs'];
  /** The identity Lease's and the kubernetes Service's periods (default upstream's); tests shorten them. */
  controlPlaneTiming?: ApiServerOptions['controlPlaneTiming'];
}

/** Encryption at rest as the server runs it, for `up`'s banner. */
export interface EncryptionSummary {
  configFile: string;
  /** The configuration is `up`'s default (generated into the data directory), not the operator's. */
  isDefault: boolean;
  /** `secrets: secretbox, identity` and so on, one entry per rule. */
  rules: string[];
}

export interface EmbeddedServer {
  url: string;
  port: number;
  /** Settles (never rejects) once the server can no longer accept connections (a TLS front thread ended): stop it. */
  broken: Promise<Error>;
  dataDir: string;
  kubeconfigPath: string;
  credentials: ServerCredentials;
  /** When the admin kubeconfig's client certificate expires (`kube-identity kubeconfig admin --renew` makes a new one). */
  adminCertificateExpiry: Date;
  /** The cluster CA files, for the signers of kube-apiserver-client*. */
  caCertFile: string;
  caKeyFile: string;
  /** The kubelet-serving CA files, for the kubernetes.io/kubelet-serving signer. */
  kubeletServingCaCertFile: string;
  kubeletServingCaKeyFile: string;
  store: Store;
  encryption?: EncryptionSummary;
  /** Refuses new connections from now on (a shutdown's first step); the open ones are served until close(). */
  stopAccepting(): void;
  /** Closes the server (ApiServer.close), then the store; `exiting` leaves connections still open at the grace to the process's exit. */
  close(opts?: CloseOptions): Promise<void>;
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
  const onEtcd = await isOnEtcd(opts);
  const unlock = onEtcd ? () => undefined : lockDataDir(dataDir);
  try {
    const server = await startOnDataDir(dataDir, opts, onEtcd);
    return { ...server, close: (closeOpts) => server.close(closeOpts).finally(unlock) };
  } catch (err) {
    unlock();
    throw err;
  }
}

/** --client-ca-file, or the cluster CA: never the kubelet-serving CA. */
function clientCaOf(opts: EmbeddedServerOptions, credentials: ServerCredentials): string {
  return opts.clientCaPem ?? credentials.caPem;
}

/**
 * Whether the store is etcd. The etcd client's modules (gRPC, protobuf: about a third of the API
 * server's module loading, 150-250 ms of CPU at every start) are loaded only then: `up` and a
 * restart on SQLite never pay for them.
 */
async function isOnEtcd(opts: EmbeddedServerOptions): Promise<boolean> {
  if (opts.storage === 'etcd') return true;
  if (opts.store === undefined || opts.store instanceof MemoryStore || opts.store instanceof SqliteStore) return false;
  return opts.store instanceof (await import('../storage/etcd/etcd.js')).EtcdStore;
}

async function startOnDataDir(dataDir: string, opts: EmbeddedServerOptions, onEtcd: boolean): Promise<EmbeddedServer> {
  const host = opts.host ?? '127.0.0.1';
  const wildcard = host === '0.0.0.0' || host === '::';
  const credentials = await ensureCredentials(dataDir, wildcard ? [] : [host]);
  const metricsRegistry = opts.metricsRegistry ?? defaultMetricsRegistry();
  const { store, encryption } = await openStorage(opts, dataDir, metricsRegistry);
  const rbacIndex = new RbacIndex(store);
  const nodeGraph = new NodeGraph(store, metricsRegistry);
  const bootstrapTokens = new BootstrapTokenSecrets(store);
  const clientCaPem = clientCaOf(opts, credentials);
  const access = await createAccessControl({
    objects: objectReader(store),
    rbacIndex,
    nodeGraph,
    bootstrapTokens,
    clientCaPem,
    tokenFile: opts.tokenFile,
    serviceAccountKey: credentials.serviceAccountKeyPem,
    issuer: opts.issuer ?? DEFAULT_ISSUER,
    anonymous: opts.anonymousAuth ?? true,
    controllerPolicy: opts.controllerPolicy,
  });
  const auditor = opts.audit && (await Auditor.create(opts.audit, metricsRegistry, opts.logger));
  const server = await startApiServer({
    store,
    logger: opts.logger,
    tls: { ...servingFiles(dataDir, opts.tls), clientCaPem },
    host,
    port: opts.port ?? 0,
    authenticator: access.authenticator,
    authorizer: access.authorizer,
    extraStrategies: access.strategies,
    admissionPlugins: ['NodeRestriction'],
    metricsRegistry,
    auditor,
    healthChecks: [encryption?.atRest.healthChecks(), opts.healthChecks].flatMap((checks) => checks ?? []),
    defaultObjects: [...access.defaultObjects, ...(opts.kubeadmAutoApprove === false ? [] : kubeadmAutoApproveBindings())],
    staticRoutes: access.oidcRoutes,
    unknownFields: true,
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
    // kube-root-ca.crt: the CA of the server's own certificate, and nothing else.
    rootCaPem: credentials.caPem,
    // On etcd the Events' leases expire them.
    eventTtlSeconds: onEtcd ? undefined : opts.eventTtlSeconds,
    serviceRange: opts.serviceRange,
    flowControl: opts.flowControl,
    requestDeadlineMs: opts.requestDeadlineMs,
    disableHttp2: opts.disableHttp2,
    http2MaxStreamsPerConnection: opts.http2MaxStreamsPerConnection,
    goawayChance: opts.goawayChance,
    tlsFrontWorkers: opts.tlsFrontWorkers,
    countMetricPollPeriodMs: opts.countMetricPollPeriodMs,
    dbMetricPollIntervalMs: opts.dbMetricPollIntervalMs,
    controlPlaneTiming: opts.controlPlaneTiming,
  }).catch(async (err: unknown) => {
    await auditor?.close();
    throw err;
  });
  return {
    url: server.url,
    port: server.port,
    broken: server.broken,
    stopAccepting: server.stopAccepting,
    dataDir,
    kubeconfigPath: writeKubeconfig(dataDir, server.url, credentials, opts.kubeconfigOut ? path.resolve(opts.kubeconfigOut) : undefined),
    credentials,
    adminCertificateExpiry: checkAdminCredentials(dataDir, credentials, opts.logger),
    caCertFile: path.join(dataDir, CREDENTIAL_FILES.caPem),
    caKeyFile: path.join(dataDir, CREDENTIAL_FILES.caKeyPem),
    kubeletServingCaCertFile: path.join(dataDir, CREDENTIAL_FILES.kubeletServingCaPem),
    kubeletServingCaKeyFile: path.join(dataDir, CREDENTIAL_FILES.kubeletServingCaKeyPem),
    store,
    encryption: encryption?.summary,
    async close(closeOpts) {
      await server.close(closeOpts);
      rbacIndex.stop();
      nodeGraph.stop();
      bootstrapTokens.stop();
      await store.close();
      encryption?.atRest.close();
    },
  };
}

/** The serving files: the ones given, or the data directory's (both re-read when they change). */
function servingFiles(dataDir: string, tls: EmbeddedServerOptions['tls']): NonNullable<EmbeddedServerOptions['tls']> {
  return {
    ...tls,
    certFile: tls?.certFile ?? path.join(dataDir, CREDENTIAL_FILES.servingCertPem),
    keyFile: tls?.keyFile ?? path.join(dataDir, CREDENTIAL_FILES.servingKeyPem),
  };
}

/** Admin credentials worth a warning: one about to expire, and the static token earlier versions trusted. */
function checkAdminCredentials(dataDir: string, credentials: ServerCredentials, logger: Logger): Date {
  const expiry = adminCertificateExpiry(credentials);
  const days = (expiry.getTime() - Date.now()) / 86_400_000;
  if (days < ADMIN_RENEW_WARNING_DAYS) {
    logger.warn({ notAfter: expiry.toISOString(), renew: 'kube-identity kubeconfig admin --renew' }, days < 0 ? 'admin client certificate has expired' : 'admin client certificate expires soon');
  }
  if (existsSync(path.join(dataDir, RETIRED_ADMIN_TOKEN_FILE))) {
    logger.warn({ file: path.join(dataDir, RETIRED_ADMIN_TOKEN_FILE) }, 'the static admin token is no longer accepted: use the admin kubeconfig, or pass --token-auth-file; the file can be deleted');
  }
  return expiry;
}

/** The store, with the encryption at rest its values go through. */
async function openStorage(opts: EmbeddedServerOptions, dataDir: string, registry: Registry) {
  const encryption = await startEncryption(opts, dataDir, registry);
  try {
    return { store: opts.store ?? (await openStore(opts, dataDir, encryption?.atRest, registry)), encryption };
  } catch (err) {
    encryption?.atRest.close();
    throw err;
  }
}

/** The operator's --encryption-provider-config, else `up`'s default (not for a store that keeps nothing on disk). */
async function startEncryption(opts: EmbeddedServerOptions, dataDir: string, registry: Registry): Promise<{ atRest: EncryptionAtRest; summary: EncryptionSummary } | undefined> {
  const given = opts.encryptionProviderConfig;
  const byDefault = !given && opts.encryptSecretsByDefault === true && opts.storage !== 'memory' && !(opts.store instanceof MemoryStore);
  if (!given && !byDefault) return undefined;
  const file = given ? path.resolve(given) : ensureDefaultEncryptionConfig(dataDir).file;
  const atRest = await EncryptionAtRest.start({
    file,
    automaticReload: opts.encryptionProviderConfigAutomaticReload,
    registry,
    logger: opts.logger.child({ component: 'encryption' }),
    kmsTimings: opts.kmsTimings,
  });
  return { atRest, summary: { configFile: file, isDefault: !given, rules: atRest.describe() } };
}

async function openStore(opts: EmbeddedServerOptions, dataDir: string, transformer: ValueTransformer | undefined, registry: Registry): Promise<Store> {
  if (opts.storage === 'memory') return new MemoryStore();
  if (opts.storage !== 'etcd') return openSqlite(path.join(dataDir, 'store.db'), transformer);
  if (!opts.etcd) throw new Error('storage etcd needs the etcd options');
  const ttl = opts.eventTtlSeconds;
  const events = [storageKey('', 'events', undefined), storageKey('events.k8s.io', 'events', undefined)];
  const [{ EtcdStore }, { EtcdMetrics }] = await Promise.all([import('../storage/etcd/etcd.js'), import('../storage/etcd/etcd-metrics.js')]);
  return EtcdStore.open({
    ...opts.etcd,
    ttlSeconds: (key) => (events.some((prefix) => key.startsWith(prefix)) ? ttl : undefined),
    logger: opts.logger.child({ component: 'etcd' }),
    transformer,
    metrics: new EtcdMetrics(registry),
  });
}

function defaultMetricsRegistry(): Registry {
  const registry = new Registry();
  registerProcessMetrics(registry);
  return registry;
}
