/**
 * kube-apiserver's --service-cluster-ip-range, as the allocator holds it (IPv4: the embedded server
 * allocates no IPv6 cluster IPs). The server and, under up, the serving approver read one value.
 */
import { isIP } from 'node:net';

export interface ServiceRange {
  cidr: string;
  base: number;
  size: number;
}

export const ipToInt = (ip: string): number => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
export const intToIp = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

/**
 * Parses an IPv4 Service range. Upstream refuses ranges larger than a /12 for IPv4 (the allocator's
 * bitmap); a range must also leave room for the network, the kubernetes Service and broadcast.
 */
export function parseServiceIpRange(cidr: string): ServiceRange {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(cidr.trim());
  const prefix = Number(m?.[2]);
  if (!m?.[1] || isIP(m[1]) !== 4) throw new Error(`serviceClusterIpRange: must be an IPv4 CIDR such as 10.96.0.0/12, got ${JSON.stringify(cidr)}`);
  if (prefix < 12) throw new Error(`serviceClusterIpRange: ${cidr} is too large; for 32-bit addresses, the mask must be >= 12`);
  if (prefix > 29) throw new Error(`serviceClusterIpRange: ${cidr} is too small; the mask must be <= 29`);
  const size = 2 ** (32 - prefix);
  const base = ipToInt(m[1]) - (ipToInt(m[1]) % size);
  return { cidr: `${intToIp(base)}/${prefix}`, base, size };
}

/** kubeadm's default --service-cluster-ip-range. */
export const DEFAULT_SERVICE_RANGE = parseServiceIpRange('10.96.0.0/12');

/** The range's first address: the `kubernetes` Service's, as kube-apiserver reserves it. */
export const kubernetesServiceIp = (range: ServiceRange): string => intToIp(range.base + 1);
