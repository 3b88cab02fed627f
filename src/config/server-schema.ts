/**
 * Options of `kube-identity apiserver` and `kube-identity up`, in the same table form as the
 * controller's (schema.ts): one entry drives the flag, the KUBE_IDENTITY_* variable, the YAML key
 * and `--help`, and every value is checked before anything starts.
 */
import { CONTROLLER_CONFIG_SCHEMA, type ConfigOf, type FieldSpec } from './schema.js';

/** Storage backends of the embedded API server. */
export const STORAGE_KINDS = ['sqlite', 'memory'] as const;

export const APISERVER_CONFIG_SCHEMA = {
  dataDir: { type: 'string', default: '.kube-identity', description: 'Directory for the CA, certificates, keys, kubeconfig and store (kept private: 0700).' },
  host: { type: 'string', default: '127.0.0.1', description: 'Address the API server listens on.' },
  port: { type: 'int', default: 6443, min: 0, max: 65535, description: 'Port the API server listens on (0 picks a free one).' },
  storage: { type: 'enum', default: 'sqlite', values: STORAGE_KINDS, description: 'Where objects are kept: sqlite (DATA_DIR/store.db) or memory (lost at exit).' },
  logLevel: CONTROLLER_CONFIG_SCHEMA.logLevel,
  bookmarkIntervalMs: { type: 'int', default: 60_000, min: 1, description: 'Interval of watch bookmarks, in milliseconds.' },
  kubeconfigOut: { type: 'string', default: '', description: 'Where to write the admin kubeconfig; empty means DATA_DIR/kubeconfig.' },
  tokenAuthFile: { type: 'string', default: '', description: 'Static bearer tokens as CSV: token,user,uid,"group1,group2" (kube-apiserver format).' },
} as const satisfies Record<string, FieldSpec>;

export const UP_CONFIG_SCHEMA = {
  ...APISERVER_CONFIG_SCHEMA,
  metricsBindAddress: { ...CONTROLLER_CONFIG_SCHEMA.metricsBindAddress, default: '127.0.0.1:8080' },
  logFile: { type: 'string', default: '', description: 'Where logs go; empty means DATA_DIR/kube-identity.log.' },
} as const satisfies Record<string, FieldSpec>;

export type ApiserverConfig = ConfigOf<typeof APISERVER_CONFIG_SCHEMA>;
export type UpConfig = ConfigOf<typeof UP_CONFIG_SCHEMA>;
