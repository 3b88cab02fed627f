/**
 * TLS settings named as Go's crypto/tls names them, which is how kube-apiserver and
 * kube-controller-manager take them (`--tls-min-version`, `--tls-cipher-suites`), mapped onto
 * Node's (OpenSSL's) names. The default suites are Go's for TLS 1.2 (ECDHE key exchange with
 * AES-GCM, ChaCha20-Poly1305 or AES-CBC-SHA); OpenSSL's own default would also offer CCM, CCM8,
 * ARIA, CBC-SHA256/384 and RSA key exchange, which Go never negotiates by default.
 */
import type { SecureContextOptions } from 'node:tls';

/** Go's `tls.Version*` names → Node's. */
export const TLS_VERSIONS = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
} as const;

export type TlsVersionName = keyof typeof TLS_VERSIONS;

/** Go's names of the TLS 1.0-1.2 suites it implements (`tls.CipherSuites()` and `InsecureCipherSuites()`) → OpenSSL's. */
const TLS12_SUITES: Record<string, string> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  // Go's older spellings of the two above, still accepted by its flag parsing.
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  // Go's insecure list: accepted when named, as kube-apiserver accepts them.
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
};

/** TLS 1.3 suites: Go accepts their names in the flag but always negotiates these three; so does this. */
const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

/**
 * Go's default TLS 1.2 suites, in its preference order (what kube-apiserver offers without
 * --tls-cipher-suites): ECDHE only, AEADs first, then the AES-CBC-SHA ones Go still enables.
 */
export const DEFAULT_CIPHER_SUITES = [
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
  'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA',
];

export interface TlsSettings {
  minVersion: TlsVersionName;
  /** Go names; empty means DEFAULT_CIPHER_SUITES. */
  cipherSuites: readonly string[];
}

/** Splits and checks a `--tls-cipher-suites` value; each unknown name is one problem. */
export function parseCipherSuites(text: string, problems: string[], key = 'tlsCipherSuites'): string[] {
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const n of names) {
    if (!(n in TLS12_SUITES) && !TLS13_SUITES.includes(n)) problems.push(`${key}: unknown cipher suite ${JSON.stringify(n)} (Go names, e.g. ${DEFAULT_CIPHER_SUITES[0]})`);
  }
  return names;
}

/** The Node secure-context options for these settings (certificate and key aside). */
export function tlsContextOptions(s: TlsSettings): Pick<SecureContextOptions, 'minVersion' | 'ciphers'> {
  const names = s.cipherSuites.length > 0 ? s.cipherSuites : DEFAULT_CIPHER_SUITES;
  const tls12 = names.map((n) => TLS12_SUITES[n]).filter((n): n is string => n !== undefined);
  // Node takes the TLS 1.3 suites (TLS_*) in the same list; none named for 1.2 leaves 1.2 no suite, as in Go.
  return { minVersion: TLS_VERSIONS[s.minVersion], ciphers: [...TLS13_SUITES, ...new Set(tls12)].join(':') };
}
