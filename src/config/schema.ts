/**
 * The controller's configuration: one table drives flags (`--kebab-case`), environment variables
 * (`KUBE_IDENTITY_UPPER_SNAKE`), YAML file keys (camelCase) and `--help`. Durations are Go-style
 * strings outside and milliseconds inside.
 */
import { TLS_CONFIG_SCHEMA } from './tls.js';
import { WORKLOAD_SIGNER_CONFIG_SCHEMA } from './workload-signer.js';

export type FieldType = 'string' | 'int' | 'number' | 'bool' | 'duration' | 'enum';

export interface FieldSpec {
  type: FieldType;
  default: string | number | boolean;
  description: string;
  values?: readonly string[];
  min?: number;
  max?: number;
}

/** A table of options; the controller's, the API server's and `up`'s are each one. */
export type ConfigSchema = Record<string, FieldSpec>;

/** The serving approver's defaults (docs/serving-approver.md explains each choice). */
export const DEFAULT_KUBELET_SERVING_DNS_REGEX = '^{node}(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** Private, CGNAT and ULA ranges, with kubeadm's Service range (10.96.0.0/12) cut out of 10.0.0.0/8. */
export const DEFAULT_KUBELET_SERVING_IP_RANGES = '10.0.0.0/10,10.64.0.0/11,10.112.0.0/12,10.128.0.0/9,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10,fc00::/7';

export const CONTROLLER_CONFIG_SCHEMA = {
  kubeconfig: { type: 'string', default: '', description: 'Path to a kubeconfig; empty uses in-cluster config, then $KUBECONFIG and ~/.kube/config.' },
  metricsBindAddress: { type: 'string', default: ':8080', description: 'Address serving /metrics, /healthz and /readyz (host:port; port 0 picks one).' },
  // Secure metrics, as controller-runtime's (kubebuilder's flag names): HTTPS, and TokenReview +
  // SubjectAccessReview (`get` on /metrics) for each caller; the probes stay open.
  metricsSecure: { type: 'bool', default: false, description: 'Serve the metrics listener over HTTPS and let only callers allowed `get` on the non-resource URL /metrics (TokenReview, SubjectAccessReview) read /metrics.' },
  metricsCertPath: { type: 'string', default: '', description: 'With --metrics-secure: directory holding the serving pair (re-read when it changes); empty: a self-signed certificate made at start.' },
  metricsCertName: { type: 'string', default: 'tls.crt', description: 'Certificate file name inside --metrics-cert-path.' },
  metricsCertKey: { type: 'string', default: 'tls.key', description: 'Key file name inside --metrics-cert-path.' },
  ...TLS_CONFIG_SCHEMA,
  logLevel: { type: 'enum', default: 'info', values: ['debug', 'info', 'warn', 'error'], description: 'Log level.' },
  leaderElect: { type: 'bool', default: true, description: 'Run controllers only while holding the leader Lease.' },
  leaderElectionNamespace: { type: 'string', default: 'kube-system', description: 'Namespace of the leader election Lease.' },
  leaderElectionId: { type: 'string', default: 'kube-identity-controller', description: 'Name of the leader election Lease.' },
  leaderElectionIdentity: { type: 'string', default: '', description: 'Holder identity; empty means <hostname>_<random suffix>.' },
  leaderElectionLeaseDuration: { type: 'duration', default: '15s', description: 'How long a non-renewed lease stays valid for the other candidates.' },
  leaderElectionRenewDeadline: { type: 'duration', default: '10s', description: 'How long the leader retries renewing before it gives up leadership.' },
  leaderElectionRetryPeriod: { type: 'duration', default: '2s', description: 'Interval between acquire and renew attempts.' },
  resyncPeriod: { type: 'duration', default: '10m', description: 'How often informers re-queue every cached object (0 disables).' },
  gracefulShutdownTimeout: { type: 'duration', default: '30s', description: 'How long in-flight reconciles may run after shutdown starts.' },
  rateLimiterBaseDelay: { type: 'duration', default: '200ms', description: 'Per-key retry backoff start (doubles per failure).' },
  rateLimiterMaxDelay: { type: 'duration', default: '1000s', description: 'Per-key retry backoff cap.' },
  rateLimiterQps: { type: 'number', default: 10, min: 0.001, description: 'Overall retry token bucket refill rate per second.' },
  rateLimiterBurst: { type: 'int', default: 100, min: 1, description: 'Overall retry token bucket size.' },
  approverWorkers: { type: 'int', default: 5, min: 1, description: 'Concurrent reconciles of the CSR approver.' },
  signerWorkers: { type: 'int', default: 5, min: 1, description: 'Concurrent reconciles of each CSR signer.' },
  cleanerWorkers: { type: 'int', default: 1, min: 1, description: 'Concurrent reconciles of the CSR cleaner.' },
  clusterSigningCertFile: { type: 'string', default: '', description: 'PEM CA certificate used to sign CSRs; empty disables signing.' },
  clusterSigningKeyFile: { type: 'string', default: '', description: 'PEM CA private key matching --cluster-signing-cert-file.' },
  clusterSigningDuration: { type: 'duration', default: '8760h', description: 'Maximum lifetime of signed certificates.' },
  clusterSigningKubeletServingCertFile: { type: 'string', default: '', description: 'CA certificate for kubernetes.io/kubelet-serving only (excludes the shared pair).' },
  clusterSigningKubeletServingKeyFile: { type: 'string', default: '', description: 'CA key for kubernetes.io/kubelet-serving only.' },
  clusterSigningKubeletClientCertFile: { type: 'string', default: '', description: 'CA certificate for kubernetes.io/kube-apiserver-client-kubelet only (excludes the shared pair).' },
  clusterSigningKubeletClientKeyFile: { type: 'string', default: '', description: 'CA key for kubernetes.io/kube-apiserver-client-kubelet only.' },
  clusterSigningKubeApiserverClientCertFile: { type: 'string', default: '', description: 'CA certificate for kubernetes.io/kube-apiserver-client only (excludes the shared pair).' },
  clusterSigningKubeApiserverClientKeyFile: { type: 'string', default: '', description: 'CA key for kubernetes.io/kube-apiserver-client only.' },
  clusterSigningLegacyUnknownCertFile: { type: 'string', default: '', description: 'CA certificate for kubernetes.io/legacy-unknown only (excludes the shared pair).' },
  clusterSigningLegacyUnknownKeyFile: { type: 'string', default: '', description: 'CA key for kubernetes.io/legacy-unknown only.' },
  signerMinRsaBits: {
    type: 'int',
    default: 2048,
    min: 1024,
    description: 'Smallest RSA key any signer issues for; ECDSA keys must be P-256 or P-384, or Ed25519. An approved CSR with another key is marked Failed.',
  },
  customSigners: {
    type: 'string',
    default: '',
    description: 'Extra signer names to sign for, separated by ";": "example.com/name=CERT_FILE:KEY_FILE", or just the name to use the shared pair.',
  },
  caReloadInterval: { type: 'duration', default: '1m', description: 'How often CA files are re-checked for the signer revision history and trust bundle.' },
  revisionHistoryLimit: { type: 'int', default: 10, min: 1, description: 'How many signer ControllerRevisions to keep.' },
  controllerNamespace: { type: 'string', default: 'kube-system', description: 'Namespace of the signer ControllerRevisions.' },
  trustBundleNamespace: { type: 'string', default: 'kube-system', description: 'Namespace of the trust bundle ConfigMap.' },
  trustBundleConfigMapName: { type: 'string', default: 'kube-identity-trust-bundle', description: 'ConfigMap holding each signer\'s CA bundle (one key per signer).' },
  cleanerInterval: { type: 'duration', default: '1h', description: 'How often the CSR cleaner runs.' },
  cleanerApprovedExpiration: { type: 'duration', default: '1h', description: 'Issued CSRs are deleted this long after approval.' },
  cleanerDeniedExpiration: { type: 'duration', default: '1h', description: 'Denied and Failed CSRs are deleted this long after the condition.' },
  cleanerPendingExpiration: { type: 'duration', default: '24h', description: 'CSRs without any condition are deleted this long after creation.' },
  approveKubeletServing: {
    type: 'bool',
    default: false,
    description: 'Approve kubernetes.io/kubelet-serving CSRs that pass the serving policy below (kube-controller-manager never approves them).',
  },
  kubeletServingDnsRegex: {
    type: 'string',
    default: DEFAULT_KUBELET_SERVING_DNS_REGEX,
    description: 'Every DNS SAN must match this regular expression; {node} stands for the requesting node\'s name (escaped). Default: the name itself or NAME.<domain>.',
  },
  kubeletServingAllowedIpRanges: {
    type: 'string',
    default: DEFAULT_KUBELET_SERVING_IP_RANGES,
    description:
      'Comma-separated CIDRs every IP SAN must be inside (default: private, CGNAT and ULA, without 10.96.0.0/12). The Service range, the kubernetes Service\'s addresses, loopback, link-local, unspecified, multicast and broadcast are refused whatever this says.',
  },
  kubeletServingBypassDnsResolution: {
    type: 'bool',
    default: false,
    description: 'Skip resolving each DNS SAN of a serving CSR (by default each must resolve, within 1 s, to one of the Node\'s status.addresses IPs).',
  },
  clusterDomain: {
    type: 'string',
    default: 'cluster.local',
    description: 'The cluster\'s DNS domain (kubelet\'s --cluster-domain): serving certificates never name kubernetes.default.svc.<domain> or any *.svc.<domain>.',
  },
  serviceClusterIpRange: {
    type: 'string',
    default: '10.96.0.0/12',
    description: 'The cluster\'s Service CIDR (one, or an IPv4 and an IPv6 one): serving certificates never name an IP inside it.',
  },
  kubeletServingRequireNodeAddresses: {
    type: 'bool',
    default: true,
    description: 'Every SAN must be one of the Node\'s status.addresses; a Node not yet registered makes the CSR wait, not fail.',
  },
  kubeletServingMaxPendingPerNode: {
    type: 'int',
    default: 3,
    min: 1,
    description: 'Flood guard: pending serving CSRs from one node beyond this many (oldest first) are left pending and counted, never approved.',
  },
  kubeletServingDryRun: {
    type: 'bool',
    default: false,
    description: 'Decide and record each serving CSR (log line, Event, metric) without writing the approval or denial.',
  },
  kubeletServingDeny: {
    type: 'bool',
    default: false,
    description: 'Deny serving CSRs that break the policy (Denied condition naming the rule) instead of leaving them pending.',
  },
  ...WORKLOAD_SIGNER_CONFIG_SCHEMA,
} as const satisfies Record<string, FieldSpec>;

export type ConfigKey = keyof typeof CONTROLLER_CONFIG_SCHEMA;

type ValueOf<F extends FieldSpec> = F['type'] extends 'bool' ? boolean : F['type'] extends 'string' | 'enum' ? string : number;

/** The validated configuration of a schema; durations in milliseconds. */
export type ConfigOf<S extends ConfigSchema> = { readonly [K in keyof S]: ValueOf<S[K]> };

export type ControllerConfig = ConfigOf<typeof CONTROLLER_CONFIG_SCHEMA>;

export const flagName = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
export const envName = (key: string): string => `KUBE_IDENTITY_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

/** One option as `--help` and docs/configuration.md show it. */
export interface OptionDescription {
  key: string;
  flag: string;
  env: string;
  type: FieldType;
  default: string;
  description: string;
}

/** One line per option, for `--help`: flag, env, default, description. */
export function describeConfig(schema: ConfigSchema = CONTROLLER_CONFIG_SCHEMA): OptionDescription[] {
  return Object.entries(schema).map(([key, f]) => ({
    key,
    flag: `--${flagName(key)}`,
    env: envName(key),
    type: f.type,
    default: String(f.default),
    description: f.values ? `${f.description} One of: ${f.values.join(', ')}.` : f.description,
  }));
}
