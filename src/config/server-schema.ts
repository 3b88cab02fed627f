/**
 * Options of `kube-identity apiserver` and `kube-identity up`, in the same table form as the
 * controller's (schema.ts): one entry drives the flag, the KUBE_IDENTITY_* variable, the YAML key
 * and `--help`, and every value is checked before anything starts.
 */
import { AUDIT_CONFIG_SCHEMA } from './audit-schema.js';
import { CONTROLLER_CONFIG_SCHEMA, type ConfigOf, type FieldSpec } from './schema.js';
import { TLS_CONFIG_SCHEMA } from './tls.js';

/** Storage backends of the embedded API server. */
export const STORAGE_KINDS = ['sqlite', 'memory', 'etcd'] as const;

export const APISERVER_CONFIG_SCHEMA = {
  dataDir: { type: 'string', default: '.kube-identity', description: 'Directory for the CA, certificates, keys, kubeconfig and store (kept private: 0700).' },
  host: { type: 'string', default: '127.0.0.1', description: 'Address the API server listens on.' },
  port: { type: 'int', default: 6443, min: 0, max: 65535, description: 'Port the API server listens on (0 picks a free one).' },
  storage: {
    type: 'enum',
    default: 'sqlite',
    values: STORAGE_KINDS,
    description: 'Where objects are kept: sqlite (DATA_DIR/store.db), memory (lost at exit) or etcd (--etcd-servers; several replicas may share it).',
  },
  etcdServers: { type: 'string', default: '', description: 'With --storage etcd: comma-separated etcd client URLs, e.g. https://10.0.0.1:2379.' },
  etcdPrefix: { type: 'string', default: '/registry', description: 'Prefix of every key in etcd.' },
  etcdCafile: { type: 'string', default: '', description: 'CA certificate (PEM) that verifies the etcd servers.' },
  etcdCertfile: { type: 'string', default: '', description: 'Client certificate (PEM) presented to etcd.' },
  etcdKeyfile: { type: 'string', default: '', description: 'Private key (PEM) of --etcd-certfile.' },
  etcdCompactionInterval: { type: 'duration', default: '5m', description: 'How often etcd history is compacted (0 disables; replicas take turns).' },
  // Named as upstream's, and for every --storage: a scrape reads the last poll, never the store.
  etcdCountMetricPollPeriod: { type: 'duration', default: '1m', description: 'How often the objects of each resource are counted for apiserver_storage_objects (0 disables the metric).' },
  etcdDbMetricPollInterval: { type: 'duration', default: '30s', description: 'How often the database size is read for apiserver_storage_db_total_size_in_bytes (0 disables the metric).' },
  eventTtl: { type: 'duration', default: '1h', description: 'How long an Event is kept after its last write (an etcd lease with --storage etcd).' },
  // One value for the server's allocator and, under up, the serving approver's Service-range rule.
  serviceClusterIpRange: {
    ...CONTROLLER_CONFIG_SCHEMA.serviceClusterIpRange,
    description: 'IPv4 CIDR (a /12 to a /29) Services\' cluster IPs are allocated from; its first address is the kubernetes Service\'s. The serving approver refuses every address in it.',
  },
  logLevel: CONTROLLER_CONFIG_SCHEMA.logLevel,
  bookmarkIntervalMs: { type: 'int', default: 60_000, min: 1, description: 'Interval of watch bookmarks, in milliseconds.' },
  kubeconfigOut: { type: 'string', default: '', description: 'Where to write the admin kubeconfig; empty means DATA_DIR/kubeconfig.' },
  clientCaFile: {
    type: 'string',
    default: '',
    description:
      'PEM bundle of the CAs whose client certificates authenticate (kube-apiserver\'s --client-ca-file); empty means DATA_DIR/ca.crt, the cluster CA that signs the client signers under up. Never the kubelet-serving CA.',
  },
  tokenAuthFile: { type: 'string', default: '', description: 'Static bearer tokens as CSV: token,user,uid,"group1,group2" (kube-apiserver format).' },
  // Flow control (src/apiserver/flowcontrol): kube-apiserver's flags and defaults.
  maxRequestsInflight: {
    type: 'int',
    default: 400,
    min: 0,
    description: 'Read-only requests executing at once before the rest are queued or answered 429 (with priority and fairness: added to --max-mutating-requests-inflight and shared among the priority levels; 0: no limit).',
  },
  maxMutatingRequestsInflight: { type: 'int', default: 200, min: 0, description: 'Mutating requests executing at once before the rest are queued or answered 429 (0: no limit).' },
  enablePriorityAndFairness: {
    type: 'bool',
    default: true,
    description: 'Share the in-flight limits among priority levels (exempt, leader-election, node-high, workload) with fair queuing; off: two plain limits, no queues.',
  },
  // Not upstream's: one event loop queues overload before any seat is taken (docs/flow-control.md).
  maxEventLoopDelay: {
    type: 'duration',
    default: '250ms',
    description:
      'With priority and fairness: while the event loop is busy and its smoothed delay is at least this, workload-level requests (new CSRs, lists, users\' requests) are answered 429 with Retry-After; Leases, node status, leader election, the controllers and system:masters go on. 0: never.',
  },
  // kube-apiserver's --request-timeout and default (src/apiserver/server/request-timeout.ts).
  requestTimeout: {
    type: 'duration',
    default: '1m',
    min: 1,
    description:
      'How long a request may take before it is answered 504 Timeout; a request\'s ?timeout= may shorten it. Watches have their own timeouts (timeoutSeconds, or 30 to 60 minutes).',
  },
  // HTTP/2 on the secure port: kube-apiserver's flags and defaults.
  disableHttp2Serving: { type: 'bool', default: false, description: 'Offer only http/1.1 in ALPN; by default h2 is offered first, so a client multiplexes its requests and watches on one connection.' },
  http2MaxStreamsPerConnection: {
    type: 'int',
    default: 0,
    min: 0,
    description: 'The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection; 0: 100, as kube-apiserver makes Go\'s default. Also the handlers one connection may keep running.',
  },
  goawayChance: {
    type: 'number',
    default: 0,
    min: 0,
    max: 0.02,
    description: 'Fraction of HTTP/2 requests after which the server sends GOAWAY, so clients reconnect through a load balancer to another replica; requests under way finish. 0 (off) to 0.02; 0.001 is a starting point. Single replicas should keep 0.',
  },
  // Not kube-apiserver's (Go spreads connections over its cores): Node's one event loop hands accept and TLS to threads.
  tlsFrontWorkers: {
    type: 'int',
    default: 0,
    min: 0,
    max: 64,
    description:
      'Threads that accept secure-port connections and do their TLS handshakes, handing the plaintext to the main thread, which serves every request; 0: the main thread does both. Worth it with cores to spare and many clients connecting at once (docs/performance-history.md).',
  },
  ...AUDIT_CONFIG_SCHEMA,
  // Anonymous access, as kube-apiserver 1.32 limits it to the public-info endpoints.
  anonymousAuth: {
    type: 'bool',
    default: true,
    description: 'Requests without credentials to /healthz, /livez, /readyz and /version are system:anonymous (elsewhere 401); false makes those 401 too.',
  },
  // Encryption at rest (kube-apiserver's flags and file format).
  encryptionProviderConfig: {
    type: 'string',
    default: '',
    description: 'EncryptionConfiguration (apiserver.config.k8s.io/v1) file: how resources are encrypted at rest (up: default DATA_DIR/encryption-config.yaml, Secrets with secretbox).',
  },
  encryptionProviderConfigAutomaticReload: { type: 'bool', default: false, description: 'Reload --encryption-provider-config when the file changes, without a restart.' },
  // Serving TLS, as kube-apiserver's: the files are re-read when they change.
  tlsCertFile: { type: 'string', default: '', description: 'Serving certificate (PEM, chain after the leaf); empty: DATA_DIR/apiserver.crt, made at first start. Re-read when it changes.' },
  tlsPrivateKeyFile: { type: 'string', default: '', description: 'Private key (PEM) of --tls-cert-file; empty: DATA_DIR/apiserver.key.' },
  ...TLS_CONFIG_SCHEMA,
} as const satisfies Record<string, FieldSpec>;

/**
 * Controller options `up` sets itself: its kubeconfig, its CA as the signers' CA, leader election with
 * the controller's defaults (a Lease kube-system/kube-identity-controller), and revisions and trust
 * bundle in that namespace too: its identity's Role (system:kube-identity-controller) is there.
 */
const SET_BY_UP = [
  'kubeconfig',
  'metricsBindAddress',
  'logLevel',
  'leaderElect',
  'leaderElectionNamespace',
  'leaderElectionId',
  'leaderElectionIdentity',
  'leaderElectionLeaseDuration',
  'leaderElectionRenewDeadline',
  'leaderElectionRetryPeriod',
  'controllerNamespace',
  'trustBundleNamespace',
  'clusterSigningCertFile',
  'clusterSigningKeyFile',
  'clusterSigningKubeletServingCertFile',
  'clusterSigningKubeletServingKeyFile',
  'clusterSigningKubeletClientCertFile',
  'clusterSigningKubeletClientKeyFile',
  'clusterSigningKubeApiserverClientCertFile',
  'clusterSigningKubeApiserverClientKeyFile',
  'clusterSigningLegacyUnknownCertFile',
  'clusterSigningLegacyUnknownKeyFile',
  'customSigners',
  'workloadSignerCertFile',
  'workloadSignerKeyFile',
] as const;

type PassedThrough = Omit<typeof CONTROLLER_CONFIG_SCHEMA, (typeof SET_BY_UP)[number]>;

/** The controller options `up` accepts and hands to its controller (every other one). */
export const UP_CONTROLLER_OPTIONS: PassedThrough = Object.fromEntries(
  Object.entries(CONTROLLER_CONFIG_SCHEMA).filter(([k]) => !(SET_BY_UP as readonly string[]).includes(k)),
) as PassedThrough;

export const UP_CONFIG_SCHEMA = {
  ...APISERVER_CONFIG_SCHEMA,
  ...UP_CONTROLLER_OPTIONS,
  // The embedded cluster is where `demo` plays a kubelet's whole life, serving certificate included.
  approveKubeletServing: { ...CONTROLLER_CONFIG_SCHEMA.approveKubeletServing, default: true, description: `${CONTROLLER_CONFIG_SCHEMA.approveKubeletServing.description} On by default in up.` },
  // Its nodes are played on one machine (demo) and are in no DNS: their names cannot resolve.
  kubeletServingBypassDnsResolution: {
    ...CONTROLLER_CONFIG_SCHEMA.kubeletServingBypassDnsResolution,
    default: true,
    description: `${CONTROLLER_CONFIG_SCHEMA.kubeletServingBypassDnsResolution.description} On by default in up, whose nodes are in no DNS.`,
  },
  // The workload signer, with the data directory's own workload CA, so demo shows pods in mutual TLS.
  workloadSignerNames: {
    ...CONTROLLER_CONFIG_SCHEMA.workloadSignerNames,
    default: 'kube-identity.io/workload',
    description: `${CONTROLLER_CONFIG_SCHEMA.workloadSignerNames.description} up signs for kube-identity.io/workload by default, with DATA_DIR/workload-ca.crt.`,
  },
  metricsBindAddress: { ...CONTROLLER_CONFIG_SCHEMA.metricsBindAddress, default: '127.0.0.1:8080' },
  logFile: { type: 'string', default: '', description: 'Where logs go; empty means DATA_DIR/kube-identity.log.' },
  // up audits by default (docs/audit.md): its own policy and a log in the data directory.
  auditPolicyFile: { ...AUDIT_CONFIG_SCHEMA.auditPolicyFile, description: 'Path to the audit.k8s.io/v1 Policy; empty means DATA_DIR/audit-policy.yaml, written with up\'s default policy when absent.' },
  auditLogPath: { ...AUDIT_CONFIG_SCHEMA.auditLogPath, description: 'File the audit log is written to ("-" for stdout); empty means DATA_DIR/audit.log.' },
} as const satisfies Record<string, FieldSpec>;

export type ApiserverConfig = ConfigOf<typeof APISERVER_CONFIG_SCHEMA>;

/** The etcd options agree with each other: servers given (as URLs) for --storage etcd, a whole client key pair. */
export function checkEtcdOptions(c: Record<string, unknown>, problems: string[]): void {
  if (c.storage === 'etcd') {
    const servers = String(c.etcdServers ?? '').split(',').filter((u) => u !== '');
    if (servers.length === 0) problems.push('etcdServers: required with --storage etcd');
    for (const url of servers) {
      if (!/^https?:\/\/[^/\s]+:\d{1,5}$/.test(url)) problems.push(`etcdServers: each must be http(s)://HOST:PORT, got ${JSON.stringify(url)}`);
    }
  }
  if (Boolean(c.etcdCertfile) !== Boolean(c.etcdKeyfile)) problems.push('etcdCertfile and etcdKeyfile must be given together');
  if (typeof c.etcdPrefix === 'string' && !/^\/.*[^/]$/.test(c.etcdPrefix)) problems.push(`etcdPrefix: must start and not end with "/", got ${JSON.stringify(c.etcdPrefix)}`);
}
export type UpConfig = ConfigOf<typeof UP_CONFIG_SCHEMA>;
