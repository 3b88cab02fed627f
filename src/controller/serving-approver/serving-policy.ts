/**
 * The kubelet serving-certificate policy, as a pure function: what a CSR for
 * `kubernetes.io/kubelet-serving` must be for us to approve it. Identity comes only from
 * spec.username/groups (set by the API server at create); the subject, usages and every SAN are
 * then checked against that identity and the requester's own Node. Each refusal names its rule, so
 * Events, metrics and Denied messages say exactly what was wrong. See docs/serving-approver.md.
 */
import type { CertificateSigningRequest } from '../../api/certificates.js';
import { NODE_USER_PREFIX, NODES_GROUP, nodeIdentity, type Node } from '../../api/nodes.js';
import { nodeDnsRegex, type CidrSet, type IpRanges } from '../../config/kubelet-serving.js';
import type { ParsedCsr } from '../../pki/csr.js';
import { formatIp, parseIp } from '../../pki/san.js';
import { usagesMatch, KUBELET_SERVING_USAGES, goList } from '../csr/csr-policy.js';
import { apiserverIp, apiserverName, reservedIp, serviceIp, serviceName, type ControlPlane } from './serving-control-plane.js';

/** The rules a serving CSR can break; each is a metric label and the start of every refusal message. */
export const SERVING_RULES = [
  'requester',
  'request',
  'subject',
  'usages',
  'san-missing',
  'san-type',
  'apiserver-name',
  'service-name',
  'dns-name',
  'reserved-ip',
  'service-ip',
  'apiserver-ip',
  'ip-range',
  'node-address',
  'dns-resolution',
  'max-pending',
] as const;
export type ServingRule = (typeof SERVING_RULES)[number];

/** Rules whose refusal `--kubelet-serving-deny` turns into a Denied condition (the others only wait). */
export const DENIABLE_RULES: ReadonlySet<ServingRule> = new Set(SERVING_RULES.filter((r) => r !== 'requester' && r !== 'max-pending'));

export type ServingVerdict =
  | { decision: 'approve'; nodeName: string }
  | { decision: 'refuse'; rule: ServingRule; message: string }
  /** The requester's Node is not registered yet: retried when it appears, never refused. */
  | { decision: 'wait'; message: string };

export interface ServingPolicyOptions {
  dnsRegex: string;
  ipRanges: IpRanges;
  requireNodeAddresses: boolean;
  maxPendingPerNode: number;
  clusterDomain: string;
  serviceRange: CidrSet;
}

/**
 * What the policy reads besides the CSR: the Nodes (informer cache), the API server's in-cluster
 * addresses and this CSR's place in its node's queue.
 */
export interface ServingFacts {
  /** The `kubernetes` Service's cluster IPs and its Endpoints' addresses. */
  apiserverIps: ReadonlySet<string>;
  node(name: string): Readonly<Node> | undefined;
  /** The Nodes whose name or status.addresses hold an address key (see nodeAddressKeys). */
  claimedBy(addressKey: string): readonly Readonly<Node>[];
  /** 0 for the oldest pending serving CSR of this requester, 1 for the next... */
  pendingRank: number;
}

const DNS_ADDRESS_TYPES = new Set(['Hostname', 'InternalDNS', 'ExternalDNS']);
const IP_ADDRESS_TYPES = new Set(['InternalIP', 'ExternalIP']);

/** An IP in Go's canonical form (as SANs are parsed), or undefined when it is not an IP. */
function canonicalIp(ip: string): string | undefined {
  try {
    return formatIp(parseIp(ip));
  } catch {
    return undefined;
  }
}

/** A Node's status.addresses as two sets: DNS names (lower case) and canonical IPs. */
export function addressesOf(node: Readonly<Node>): { dns: Set<string>; ips: Set<string> } {
  const out = { dns: new Set<string>(), ips: new Set<string>() };
  for (const { type, address: value } of node.status?.addresses ?? []) {
    // A server may store an entry without its fields (Go reads them as ""): it names nothing.
    if (typeof type !== 'string' || typeof value !== 'string' || value === '') continue;
    if (DNS_ADDRESS_TYPES.has(type)) out.dns.add(value.toLowerCase());
    const ip = IP_ADDRESS_TYPES.has(type) ? canonicalIp(value) : undefined;
    if (ip) out.ips.add(ip);
  }
  return out;
}

const refuse = (rule: ServingRule, message: string): ServingVerdict => ({ decision: 'refuse', rule, message });

function checkSubject(parsed: Readonly<ParsedCsr>, nodeName: string): ServingVerdict | undefined {
  const s = parsed.subject;
  const extras = [s.organizationalUnits, s.countries, s.provinces, s.localities, s.streetAddresses, s.postalCodes].some((l) => l.length > 0) || !!s.serialNumber;
  const orgOk = s.organizations.length === 1 && s.organizations[0] === NODES_GROUP;
  if (s.commonName !== `${NODE_USER_PREFIX}${nodeName}` || !orgOk || extras) {
    return refuse('subject', `subject must be exactly CN=${NODE_USER_PREFIX}${nodeName}, O=${NODES_GROUP} (the requester), got "${s.text}"`);
  }
  return undefined;
}

/**
 * The SANs no serving certificate may carry, checked before the configurable rules: whatever the
 * regex and ranges allow, the API server's names and addresses, Services and reserved addresses are
 * refused, each under its own rule.
 */
function checkControlPlane(parsed: Readonly<ParsedCsr>, cp: ControlPlane): ServingVerdict | undefined {
  const name = apiserverName(parsed, cp);
  if (name !== undefined) return refuse('apiserver-name', `DNS name "${name}" is the API server's in-cluster name`);
  const service = serviceName(parsed, cp);
  if (service !== undefined) return refuse('service-name', `DNS name "${service}" is a Service name (*.svc, *.svc.${cp.clusterDomain})`);
  const reserved = reservedIp(parsed);
  if (reserved !== undefined) return refuse('reserved-ip', `IP address "${reserved}" is loopback, link-local, unspecified, multicast or broadcast`);
  const inServices = serviceIp(parsed, cp);
  if (inServices !== undefined) return refuse('service-ip', `IP address "${inServices}" is inside the Service range`);
  const apiserver = apiserverIp(parsed, cp);
  if (apiserver !== undefined) return refuse('apiserver-ip', `IP address "${apiserver}" belongs to the kubernetes Service or its Endpoints`);
  return undefined;
}

function checkSans(parsed: Readonly<ParsedCsr>, nodeName: string, o: ServingPolicyOptions): ServingVerdict | undefined {
  const dns = nodeDnsRegex(o.dnsRegex, nodeName);
  const badName = parsed.dnsNames.find((d) => !dns.test(d));
  if (badName !== undefined) return refuse('dns-name', `DNS name "${badName}" does not match ${dns.source}`);
  const badIp = parsed.ipAddresses.find((ip) => !o.ipRanges.allows(ip));
  if (badIp !== undefined) return refuse('ip-range', `IP address "${badIp}" is outside the allowed ranges`);
  return undefined;
}

function checkUsages(usages: readonly string[]): ServingVerdict | undefined {
  return usagesMatch(usages, KUBELET_SERVING_USAGES) ? undefined : refuse('usages', `usages did not match ${goList(KUBELET_SERVING_USAGES[0] ?? [])}`);
}

function checkSanTypes(parsed: Readonly<ParsedCsr>): ServingVerdict | undefined {
  if (parsed.dnsNames.length === 0 && parsed.ipAddresses.length === 0) return refuse('san-missing', 'DNS or IP subjectAltName is required');
  if (parsed.emailAddresses.length > 0) return refuse('san-type', 'Email subjectAltNames are not allowed');
  if (parsed.uris.length > 0) return refuse('san-type', 'URI subjectAltNames are not allowed');
  return undefined;
}

/** The name of the Node index on addresses (the Node informer's cache keeps it). */
export const NODE_ADDRESS_INDEX = 'addresses';

const dnsKey = (name: string): string => `dns:${name.toLowerCase()}`;
const ipKey = (ip: string): string => `ip:${ip}`;

/**
 * What a Node is found under in the address index: its name and DNS addresses (lower case) and its
 * canonical IPs. Looking a CSR's SANs up there costs the same with 5,000 Nodes as with 5, where a
 * scan of every Node per serving CSR made a join storm quadratic.
 */
export function nodeAddressKeys(node: Readonly<Node>): string[] {
  const addr = addressesOf(node);
  return [dnsKey(node.metadata?.name ?? ''), ...[...addr.dns].map(dnsKey), ...[...addr.ips].map(ipKey)];
}

/** SANs that name another Node (by its addresses or its name): refused whether or not our own Node is required. */
function checkOtherNodes(parsed: Readonly<ParsedCsr>, nodeName: string, facts: ServingFacts): ServingVerdict | undefined {
  const sans = [...parsed.dnsNames.map((d) => ({ san: d, key: dnsKey(d) })), ...parsed.ipAddresses.map((i) => ({ san: i, key: ipKey(i) }))];
  for (const { san, key } of sans) {
    const other = facts.claimedBy(key).find((n) => n.metadata?.name !== nodeName);
    if (other) return refuse('node-address', `"${san}" belongs to Node "${other.metadata?.name ?? ''}"`);
  }
  return undefined;
}

function checkOwnNode(parsed: Readonly<ParsedCsr>, nodeName: string, facts: ServingFacts): ServingVerdict | undefined {
  const node = facts.node(nodeName);
  if (!node) return { decision: 'wait', message: `Node "${nodeName}" is not registered yet; its status.addresses are needed` };
  const addr = addressesOf(node);
  const stray = parsed.dnsNames.find((d) => !addr.dns.has(d.toLowerCase()) && d.toLowerCase() !== nodeName.toLowerCase()) ??
    parsed.ipAddresses.find((i) => !addr.ips.has(i));
  if (stray !== undefined) return refuse('node-address', `"${stray}" is not among the status.addresses of Node "${nodeName}"`);
  return undefined;
}

/** The verdict for one serving CSR, rule by rule in the order the docs list them. */
export function evaluateServingCsr(csr: CertificateSigningRequest, parse: () => Readonly<ParsedCsr>, o: ServingPolicyOptions, facts: ServingFacts): ServingVerdict {
  const id = nodeIdentity({ username: csr.spec.username, groups: csr.spec.groups });
  if (!id.isNode || id.nodeName === '') {
    return refuse('requester', `requester "${csr.spec.username ?? ''}" is not a node (${NODE_USER_PREFIX}<name> in ${NODES_GROUP})`);
  }
  const { nodeName } = id;
  // The flood guard first: extras from one node are never approved, whatever they ask for.
  if (facts.pendingRank >= o.maxPendingPerNode) {
    return refuse('max-pending', `node "${nodeName}" has more than ${o.maxPendingPerNode} pending serving CSRs; only the oldest ${o.maxPendingPerNode} are considered`);
  }
  let parsed: Readonly<ParsedCsr>;
  try {
    parsed = parse();
  } catch (err) {
    return refuse('request', `unable to parse csr: ${(err as Error).message}`);
  }
  const controlPlane = { clusterDomain: o.clusterDomain, serviceRange: o.serviceRange, apiserverIps: facts.apiserverIps };
  const verdict =
    checkSubject(parsed, nodeName) ??
    checkUsages(csr.spec.usages ?? []) ??
    checkSanTypes(parsed) ??
    checkControlPlane(parsed, controlPlane) ??
    checkSans(parsed, nodeName, o) ??
    checkOtherNodes(parsed, nodeName, facts) ??
    (o.requireNodeAddresses ? checkOwnNode(parsed, nodeName, facts) : undefined);
  return verdict ?? { decision: 'approve', nodeName };
}
