/**
 * The workload signer's options (off by default): which PodCertificateRequest signer names it signs
 * for, the SPIFFE trust domain of the identities, its CA pair (a trust domain of its own: never the
 * cluster, kubelet-serving or client CAs), the longest lifetime it issues and the key types it accepts.
 */
import { PCR_KEY_TYPES, PCR_MAX_MAX_EXPIRATION_SECONDS, PCR_MIN_MAX_EXPIRATION_SECONDS, type PcrKeyType } from '../api/pod-certificates.js';
import { trustDomainError } from '../pki/spiffe.js';
import { isKubernetesSignerName } from '../api/pod-certificates.js';
import { isSignerName } from './signer-name.js';
import type { FieldSpec } from './schema.js';

export const WORKLOAD_SIGNER_CONFIG_SCHEMA = {
  workloadSignerNames: {
    type: 'string',
    default: '',
    description: 'Comma-separated PodCertificateRequest signer names the workload signer issues SPIFFE certificates for (e.g. kube-identity.io/workload); empty: the workload signer is off.',
  },
  workloadSignerTrustDomain: {
    type: 'string',
    default: 'cluster.local',
    description: 'SPIFFE trust domain of the identities issued: spiffe://<trust domain>/ns/<namespace>/sa/<service account>.',
  },
  workloadSignerCertFile: { type: 'string', default: '', description: 'PEM CA certificate of the workload signer (its own CA, published as a ClusterTrustBundle per signer name).' },
  workloadSignerKeyFile: { type: 'string', default: '', description: 'PEM CA private key matching --workload-signer-cert-file.' },
  workloadSignerMaxDuration: {
    type: 'duration',
    default: '24h',
    description: 'Longest lifetime the workload signer issues (1h to 2184h); a request\'s smaller spec.maxExpirationSeconds wins.',
  },
  workloadSignerKeyTypes: {
    type: 'string',
    default: PCR_KEY_TYPES.join(','),
    description: `Comma-separated key types the workload signer issues for (${PCR_KEY_TYPES.join(', ')}); other requests are Denied with reason UnsupportedKeyType.`,
  },
} as const satisfies Record<string, FieldSpec>;

/** Parses a comma-separated key type list; unknown names go to `problems`. */
export function parsePodKeyTypes(text: string, problems: string[] = []): PcrKeyType[] {
  const out: PcrKeyType[] = [];
  for (const name of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const known = PCR_KEY_TYPES.find((t) => t === name);
    if (known) out.push(known);
    else problems.push(`workloadSignerKeyTypes: unknown key type ${JSON.stringify(name)} (one of ${PCR_KEY_TYPES.join(', ')})`);
  }
  return out;
}

/** The signer names, as given (order kept). */
export const workloadSignerNames = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** `csrSigners`: the CSR signers' names (customSigners), which a workload signer name must not repeat. */
export function checkWorkloadSignerOptions(c: Record<string, unknown>, problems: string[], csrSigners: ReadonlySet<string>): void {
  const names = workloadSignerNames(typeof c.workloadSignerNames === 'string' ? c.workloadSignerNames : '');
  if (names.length === 0) return;
  names.forEach((name, i) => {
    const where = `workloadSignerNames entry ${JSON.stringify(name)}`;
    if (!isSignerName(name)) problems.push(`${where}: signer name must be <fully qualified domain>/<path>`);
    else if (isKubernetesSignerName(name)) problems.push(`${where}: kubernetes.io signer names are reserved for Kubernetes`);
    else if (names.indexOf(name) !== i) problems.push(`${where}: listed twice`);
    // One signer name, one ClusterTrustBundle: a CSR signer of the same name would publish another CA under it.
    else if (csrSigners.has(name)) problems.push(`${where}: also a customSigners entry; a signer name has one CA`);
  });
  const td = typeof c.workloadSignerTrustDomain === 'string' ? trustDomainError(c.workloadSignerTrustDomain) : undefined;
  if (td !== undefined) problems.push(`workloadSignerTrustDomain: ${td}`);
  if (!c.workloadSignerCertFile || !c.workloadSignerKeyFile) problems.push('workloadSignerCertFile and workloadSignerKeyFile are required with workloadSignerNames');
  const max = c.workloadSignerMaxDuration;
  if (typeof max === 'number' && (max < PCR_MIN_MAX_EXPIRATION_SECONDS * 1000 || max > PCR_MAX_MAX_EXPIRATION_SECONDS * 1000)) {
    problems.push('workloadSignerMaxDuration: must be between 1h and 2184h (the API\'s maxExpirationSeconds bounds)');
  }
  if (typeof c.workloadSignerKeyTypes === 'string' && parsePodKeyTypes(c.workloadSignerKeyTypes, problems).length === 0) {
    problems.push('workloadSignerKeyTypes: at least one key type is required');
  }
}
