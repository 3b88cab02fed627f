/**
 * The names and addresses no kubelet serving certificate may carry, whatever the DNS regex and the
 * allowed ranges say: a certificate for them would be accepted by in-cluster clients as the API
 * server or as a Service (issue #24: a join token became `kubernetes.default.svc`). Each check
 * returns the offending SAN, so the refusal names both the rule and the value.
 */
import type { CidrSet } from '../../config/kubelet-serving.js';
import { isReservedIp } from '../../config/kubelet-serving.js';
import type { ParsedCsr } from '../../pki/csr.js';

/** What the control-plane checks compare against. */
export interface ControlPlane {
  /** kubelet's --cluster-domain, e.g. cluster.local. */
  clusterDomain: string;
  /** --service-cluster-ip-range. */
  serviceRange: CidrSet;
  /** The `kubernetes` Service's cluster IPs and its Endpoints' addresses (canonical form). */
  apiserverIps: ReadonlySet<string>;
}

/** A DNS SAN as a TLS client compares it: lower case, without a trailing dot. */
const normal = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/** Whether `pattern` (a SAN, possibly `*.rest`) matches the host name `host`, as Go's and Node's TLS clients match. */
function matches(pattern: string, host: string): boolean {
  if (pattern === host) return true;
  if (!pattern.startsWith('*.')) return false;
  const dot = host.indexOf('.');
  return dot > 0 && host.slice(dot + 1) === pattern.slice(2);
}

function apiserverNames(domain: string): string[] {
  return ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${domain}`];
}

/** A SAN that is, or as a wildcard matches, one of the API server's in-cluster names. */
export function apiserverName(parsed: Readonly<ParsedCsr>, cp: ControlPlane): string | undefined {
  const names = apiserverNames(cp.clusterDomain);
  return parsed.dnsNames.find((d) => names.some((n) => matches(normal(d), n)));
}

/** A SAN under `svc` or `svc.<cluster domain>`: a Service's name, or a wildcard over Services. */
export function serviceName(parsed: Readonly<ParsedCsr>, cp: ControlPlane): string | undefined {
  const suffixes = ['.svc', `.svc.${cp.clusterDomain}`];
  return parsed.dnsNames.find((d) => suffixes.some((s) => normal(d).endsWith(s)));
}

export const reservedIp = (parsed: Readonly<ParsedCsr>): string | undefined => parsed.ipAddresses.find(isReservedIp);
export const serviceIp = (parsed: Readonly<ParsedCsr>, cp: ControlPlane): string | undefined => parsed.ipAddresses.find((ip) => cp.serviceRange.has(ip));
export const apiserverIp = (parsed: Readonly<ParsedCsr>, cp: ControlPlane): string | undefined => parsed.ipAddresses.find((ip) => cp.apiserverIps.has(ip));
