/**
 * The serving approver's option values, parsed once at load so a bad regex or CIDR is a startup
 * error naming the option, never a surprise at the first CSR: the DNS regex with its `{node}`
 * placeholder, and the IP ranges SANs must fall in, with the ranges no serving certificate may
 * name whatever the configuration says.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Addresses a node's serving certificate never names, whatever the allowed ranges say: loopback,
 * link-local (169.254.169.254, the cloud metadata address, among them), unspecified ("this
 * network"), multicast and broadcast.
 */
const RESERVED = ['0.0.0.0/8', '127.0.0.0/8', '169.254.0.0/16', '224.0.0.0/4', '255.255.255.255/32', '::/128', '::1/128', 'fe80::/10', 'ff00::/8'];

/** A set of CIDRs. */
export interface CidrSet {
  /** Whether `ip` (a literal IPv4 or IPv6 address) is inside one of the ranges. */
  has(ip: string): boolean;
}

/** The allowed IP ranges of serving certificates (the reserved ranges are a rule of their own). */
export interface IpRanges {
  allows(ip: string): boolean;
}

function familyOf(ip: string): 'ipv4' | 'ipv6' | undefined {
  return isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : undefined;
}

function addCidr(list: BlockList, cidr: string): string | undefined {
  const [addr = '', bits = '', ...rest] = cidr.split('/');
  const family = familyOf(addr);
  const prefix = Number(bits);
  const max = family === 'ipv4' ? 32 : 128;
  if (!family || rest.length > 0 || !/^\d{1,3}$/.test(bits) || prefix > max) return `${JSON.stringify(cidr)} is not a CIDR such as 10.0.0.0/8 or fd00::/8`;
  list.addSubnet(addr, prefix, family);
  return undefined;
}

/** Parses comma-separated CIDRs; each bad entry is reported in `problems` under `option`. */
export function parseCidrs(text: string, option: string, problems: string[] = []): CidrSet & { count: number } {
  const list = new BlockList();
  let count = 0;
  for (const cidr of text.split(',').map((c) => c.trim()).filter((c) => c !== '')) {
    const problem = addCidr(list, cidr);
    if (problem) problems.push(`${option}: ${problem}`);
    else count++;
  }
  return {
    count,
    has(ip) {
      const family = familyOf(ip);
      return family !== undefined && list.check(ip, family);
    },
  };
}

/** Parses the allowed ranges (kubeletServingAllowedIpRanges). */
export function parseIpRanges(text: string, problems: string[] = []): IpRanges {
  const allowed = parseCidrs(text, 'kubeletServingAllowedIpRanges', problems);
  return { allows: (ip) => allowed.has(ip) };
}

const reserved = parseCidrs(RESERVED.join(','), 'reserved');

/** Loopback, link-local, unspecified, multicast or broadcast. */
export function isReservedIp(ip: string): boolean {
  return reserved.has(ip);
}

/** The Service range (--service-cluster-ip-range): one CIDR, or two of different families (dual-stack), as upstream. */
export function parseServiceRange(text: string, problems: string[] = []): CidrSet {
  const parts = text.split(',').map((c) => c.trim()).filter((c) => c !== '');
  const set = parseCidrs(text, 'serviceClusterIpRange', problems);
  if (parts.length === 0 || parts.length > 2) problems.push('serviceClusterIpRange: must be one CIDR, or two (one IPv4, one IPv6) for dual-stack');
  return set;
}

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The DNS regex for one node: `{node}` replaced by the escaped node name. Throws on a bad pattern. */
export function nodeDnsRegex(pattern: string, nodeName: string): RegExp {
  return new RegExp(pattern.split('{node}').join(escapeRegex(nodeName)));
}

/** A DNS subdomain (RFC 1123), as kubelet's --cluster-domain. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Load-time checks of the serving options (every problem reported at once). */
export function checkKubeletServingOptions(c: Record<string, unknown>, problems: string[]): void {
  if (typeof c.kubeletServingAllowedIpRanges === 'string') parseIpRanges(c.kubeletServingAllowedIpRanges, problems);
  if (typeof c.serviceClusterIpRange === 'string') parseServiceRange(c.serviceClusterIpRange, problems);
  if (typeof c.clusterDomain === 'string' && (!DNS_SUBDOMAIN.test(c.clusterDomain) || c.clusterDomain.length > 253)) {
    problems.push(`clusterDomain: must be a DNS subdomain such as cluster.local, got ${JSON.stringify(c.clusterDomain)}`);
  }
  if (typeof c.kubeletServingDnsRegex === 'string') {
    try {
      nodeDnsRegex(c.kubeletServingDnsRegex, 'node');
    } catch (err) {
      problems.push(`kubeletServingDnsRegex: ${(err as Error).message}`);
    }
  }
}
