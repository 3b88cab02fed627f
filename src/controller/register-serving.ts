/** Registration of the kubelet serving approver (register.ts calls it when the option is on). */
import type { CertificateSigningRequest } from '../api/certificates.js';
import { NODE_USER_PREFIX, type Node } from '../api/nodes.js';
import { parseIpRanges, parseServiceRange } from '../config/kubelet-serving.js';
import { ApiserverAddresses } from './serving-approver/apiserver-addresses.js';
import { systemResolveHost, type ResolveHost } from './serving-approver/serving-dns.js';
import { keyOf } from './informer/cache.js';
import type { CsrControllerContext } from './register.js';
import { SERVING_APPROVER_NAME, ServingApproverReconciler } from './serving-approver/serving-approver.js';
import { PendingServing, servingSkips } from './serving-approver/serving-pending.js';
import { NODE_ADDRESS_INDEX, nodeAddressKeys } from './serving-approver/serving-policy.js';
import { watch } from './runtime/manager.js';

/**
 * The serving approver, with a Node informer (only when enabled: the RBAC to list and watch nodes
 * is needed then). CSR events keep the per-node pending index current; a Node event re-queues that
 * node's pending serving CSRs (a CSR waiting for its Node, or whose addresses just changed).
 */
export function addServingApprover(ctx: CsrControllerContext, resolveHost?: ResolveHost): void {
  const { config } = ctx;
  const nodeInformer = ctx.mgr.informer<Node>({
    name: 'nodes',
    resource: { group: '', version: 'v1', plural: 'nodes' },
    indexers: { [NODE_ADDRESS_INDEX]: nodeAddressKeys },
  });
  const pending = new PendingServing();
  const csrKeys = (csr: Readonly<CertificateSigningRequest>): string[] => {
    if (csr.spec?.signerName === undefined) return [];
    pending.observe(keyOf(csr), csr);
    return servingSkips(csr) ? [] : [keyOf(csr)];
  };
  ctx.mgr.addController({
    name: SERVING_APPROVER_NAME,
    workers: config.approverWorkers,
    rateLimiter: ctx.rateLimiter,
    reconciler: new ServingApproverReconciler({
      ...ctx.deps(SERVING_APPROVER_NAME),
      nodes: nodeInformer.store,
      pending,
      policy: {
        dnsRegex: config.kubeletServingDnsRegex,
        ipRanges: parseIpRanges(config.kubeletServingAllowedIpRanges),
        requireNodeAddresses: config.kubeletServingRequireNodeAddresses,
        maxPendingPerNode: config.kubeletServingMaxPendingPerNode,
        clusterDomain: config.clusterDomain,
        serviceRange: parseServiceRange(config.serviceClusterIpRange),
      },
      apiserver: new ApiserverAddresses(ctx.client.forComponent(SERVING_APPROVER_NAME), ctx.clock),
      resolveHost: config.kubeletServingBypassDnsResolution ? undefined : (resolveHost ?? systemResolveHost),
      dryRun: config.kubeletServingDryRun,
      deny: config.kubeletServingDeny,
    }),
    watches: [
      watch(ctx.csrInformer, csrKeys),
      watch(nodeInformer, (node) => pending.keysOf(`${NODE_USER_PREFIX}${node.metadata?.name ?? ''}`)),
    ],
  });
}
