/**
 * The serving approver's option values, parsed once at load so a bad regex or CIDR is a startup
 * error naming the option, never a surprise at the first CSR: the DNS regex with its `{node}`
 * placeholder, and the IP ranges SANs must fall in, with the ranges no serving certificate may
 * name whatever the configuration says.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Addresses a node's serving certificate never names: this host, link-local, multicast, "this network", broadcast. */
const ALWAYS_REFUSED = [
  '0.0.0.0/8',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '224.0.0.0/4',
  '255.255.255.255/32',
  '::/128',
  '::1/128',
  'fe80::/10',
  'ff00::/8',
];

export interface IpRanges {
  /** Whether `ip` (a literal IPv4 or IPv6 address) is inside the allowed ranges and outside the refused ones. */
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

/** Parses comma-separated CIDRs; each bad entry is reported in `problems`. */
export function parseIpRanges(text: string, problems: string[] = []): IpRanges {
  const allowed = new BlockList();
  for (const cidr of text.split(',').map((c) => c.trim()).filter((c) => c !== '')) {
    const problem = addCidr(allowed, cidr);
    if (problem) problems.push(`kubeletServingAllowedIpRanges: ${problem}`);
  }
  const refused = new BlockList();
  for (const cidr of ALWAYS_REFUSED) addCidr(refused, cidr);
  return {
    allows(ip) {
      const family = familyOf(ip);
      return family !== undefined && allowed.check(ip, family) && !refused.check(ip, family);
    },
  };
}

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The DNS regex for one node: `{node}` replaced by the escaped node name. Throws on a bad pattern. */
export function nodeDnsRegex(pattern: string, nodeName: string): RegExp {
  return new RegExp(pattern.split('{node}').join(escapeRegex(nodeName)));
}

/** Load-time checks of the serving options (every problem reported at once). */
export function checkKubeletServingOptions(c: Record<string, unknown>, problems: string[]): void {
  if (typeof c.kubeletServingAllowedIpRanges === 'string') parseIpRanges(c.kubeletServingAllowedIpRanges, problems);
  if (typeof c.kubeletServingDnsRegex === 'string') {
    try {
      nodeDnsRegex(c.kubeletServingDnsRegex, 'node');
    } catch (err) {
      problems.push(`kubeletServingDnsRegex: ${(err as Error).message}`);
    }
  }
}
