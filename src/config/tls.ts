/**
 * The TLS options kube-apiserver and kube-controller-manager share (`--tls-min-version`,
 * `--tls-cipher-suites`, Go's names), for the API server and the controller's secure metrics.
 */
import { parseCipherSuites, TLS_VERSIONS, type TlsSettings, type TlsVersionName } from '../pki/tls-options.js';
import type { FieldSpec } from './schema.js';

export const TLS_CONFIG_SCHEMA = {
  tlsMinVersion: {
    type: 'enum',
    default: 'VersionTLS12',
    values: Object.keys(TLS_VERSIONS),
    description: 'Minimum TLS version served (Go names, as kube-apiserver).',
  },
  tlsCipherSuites: {
    type: 'string',
    default: '',
    description:
      'Comma-separated TLS 1.2 cipher suites, Go names (e.g. TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256); empty: Go\'s defaults, ECDHE with AES-GCM, ChaCha20-Poly1305 or AES-CBC-SHA. TLS 1.3 suites are fixed, as in Go.',
  },
} as const satisfies Record<string, FieldSpec>;

/** Every --tls-cipher-suites name is one Go knows. */
export function checkTlsOptions(c: Record<string, unknown>, problems: string[]): void {
  if (typeof c.tlsCipherSuites === 'string') parseCipherSuites(c.tlsCipherSuites, problems);
}

/** The settings of a validated configuration. */
export function tlsSettings(c: { tlsMinVersion: string; tlsCipherSuites: string }): TlsSettings {
  return { minVersion: c.tlsMinVersion as TlsVersionName, cipherSuites: parseCipherSuites(c.tlsCipherSuites, []) };
}
