import { loadControllerConfig } from './load.js';
import { isReservedIp, nodeDnsRegex, parseIpRanges, parseServiceRange } from './kubelet-serving.js';
import { DEFAULT_KUBELET_SERVING_DNS_REGEX, DEFAULT_KUBELET_SERVING_IP_RANGES } from './schema.js';

describe('serving approver options', () => {
  it('default ranges: private, CGNAT and ULA in, without the default Service range; public and reserved out', () => {
    const r = parseIpRanges(DEFAULT_KUBELET_SERVING_IP_RANGES);
    for (const ip of ['10.1.2.3', '10.95.255.255', '10.112.0.0', '10.244.0.10', '10.255.255.255', '172.16.0.1', '192.168.1.1', '100.64.0.1', 'fd00::1']) {
      expect([ip, r.allows(ip)]).toEqual([ip, true]);
    }
    for (const ip of ['10.96.0.1', '10.96.0.10', '10.111.255.255', '8.8.8.8', '127.0.0.1', '169.254.169.254', '224.0.0.1', '0.0.0.1', '::1', 'fe80::1', 'ff02::1', '2001:db8::1', 'not-an-ip']) {
      expect([ip, r.allows(ip)]).toEqual([ip, false]);
    }
  });

  it('reserved: loopback, link-local, unspecified, multicast and broadcast, whatever the ranges allow', () => {
    for (const ip of ['127.0.0.1', '169.254.169.254', '169.254.1.1', '239.1.1.1', '0.0.0.0', '0.1.2.3', '255.255.255.255', '::', '::1', 'fe80::1', 'ff05::2']) {
      expect([ip, isReservedIp(ip)]).toEqual([ip, true]);
    }
    for (const ip of ['10.0.0.1', '8.8.8.8', 'fd00::1', '2001:db8::1']) expect([ip, isReservedIp(ip)]).toEqual([ip, false]);
  });

  it('the Service range: one CIDR or a dual-stack pair', () => {
    const problems: string[] = [];
    const r = parseServiceRange('10.96.0.0/12,fd00:10:96::/112', problems);
    expect(problems).toEqual([]);
    expect(['10.96.0.1', '10.111.255.254', 'fd00:10:96::1'].map((ip) => r.has(ip))).toEqual([true, true, true]);
    expect(['10.112.0.1', 'fd00:10:97::1'].map((ip) => r.has(ip))).toEqual([false, false]);
    parseServiceRange('', problems);
    parseServiceRange('10.0.0.0/16,10.1.0.0/16,10.2.0.0/16', problems);
    expect(problems).toHaveLength(2);
  });

  it('the DNS regex: the node name alone or NAME.<domain>, with the name escaped', () => {
    const re = nodeDnsRegex(DEFAULT_KUBELET_SERVING_DNS_REGEX, 'node.1');
    expect(['node.1', 'node.1.example.com'].map((d) => re.test(d))).toEqual([true, true]);
    expect(['nodex1', 'node.1x', 'other', 'node.1.', 'x.node.1'].map((d) => re.test(d))).toEqual([false, false, false, false, false]);
  });

  it('a bad CIDR, regex or domain is a startup error naming the option', async () => {
    await expect(loadControllerConfig({ flags: { kubeletServingAllowedIpRanges: '10.0.0.0/8,10.0.0.0/33,fd00::', kubeletServingDnsRegex: '^{node}(' } })).rejects.toThrow(
      /kubeletServingAllowedIpRanges: "10.0.0.0\/33" is not a CIDR[\s\S]*kubeletServingAllowedIpRanges: "fd00::" is not a CIDR[\s\S]*kubeletServingDnsRegex: Invalid regular expression/,
    );
    await expect(loadControllerConfig({ flags: { serviceClusterIpRange: '10.96.0.0', clusterDomain: 'Cluster_Local' } })).rejects.toThrow(
      /serviceClusterIpRange: "10.96.0.0" is not a CIDR[\s\S]*clusterDomain: must be a DNS subdomain/,
    );
  });

  it('every option is a flag, an env var and a config key', async () => {
    const c = await loadControllerConfig({ flags: { approveKubeletServing: 'true' }, env: { KUBE_IDENTITY_KUBELET_SERVING_MAX_PENDING_PER_NODE: '7', KUBE_IDENTITY_KUBELET_SERVING_DRY_RUN: 'true' } });
    expect([c.approveKubeletServing, c.kubeletServingMaxPendingPerNode, c.kubeletServingDryRun, c.kubeletServingDeny, c.kubeletServingRequireNodeAddresses]).toEqual([true, 7, true, false, true]);
  });
});
