/**
 * The serving policy's DNS check (on unless --kubelet-serving-bypass-dns-resolution): every DNS SAN
 * must resolve, within a second, to at least one IP of the requesting Node's status.addresses. A
 * name a node merely wrote into its own Node status is not enough then: the cluster's DNS must
 * agree. postfinance's kubelet-csr-approver checks resolution the same way (its IP SANs must be
 * among the resolved addresses instead).
 */
import { promises as dns } from 'node:dns';
import type { Node } from '../../api/nodes.js';
import { formatIp, parseIp } from '../../pki/san.js';
import { addressesOf, type ServingVerdict } from './serving-policy.js';

/** Resolves a host name to its IPs (empty when it has none); rejects when resolution fails. */
export type ResolveHost = (name: string) => Promise<string[]>;

const TIMEOUT_MS = 1000;

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), as Go's LookupHost. */
export const systemResolveHost: ResolveHost = async (name) => (await dns.lookup(name, { all: true, verbatim: true })).map((a) => a.address);

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const canonical = (ip: string): string | undefined => {
  try {
    return formatIp(parseIp(ip));
  } catch {
    return undefined;
  }
};

/** The verdict of the DNS check for `dnsNames` of a request from `node`; undefined when every name passes. */
export async function checkDnsResolution(dnsNames: readonly string[], node: Readonly<Node> | undefined, resolve: ResolveHost): Promise<ServingVerdict | undefined> {
  const nodeIps = node ? addressesOf(node).ips : new Set<string>();
  for (const name of dnsNames) {
    let resolved: string[];
    try {
      resolved = await withTimeout(resolve(name), TIMEOUT_MS);
    } catch (err) {
      return { decision: 'refuse', rule: 'dns-resolution', message: `DNS name "${name}" does not resolve: ${(err as Error).message}` };
    }
    const ips = resolved.map(canonical).filter((ip): ip is string => ip !== undefined);
    if (!ips.some((ip) => nodeIps.has(ip))) {
      const got = ips.length > 0 ? ips.join(', ') : 'no address';
      return { decision: 'refuse', rule: 'dns-resolution', message: `DNS name "${name}" resolves to ${got}, none of them an IP of Node "${node?.metadata?.name ?? ''}"` };
    }
  }
  return undefined;
}
