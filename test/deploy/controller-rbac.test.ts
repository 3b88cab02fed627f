/**
 * One controller, two installations, one set of grants: what the Helm chart's roles give the
 * controller (every part on: the cluster CA, serving approver, workload signer, secure metrics) is what the API
 * server's default policy gives `up`'s controller, system:kube-identity-controller, for the same
 * configuration: the same verbs on the same resources, and the same signers for each signer verb.
 * Names narrow the same rules in both (its own Lease and ConfigMap); this compares verbs and signers.
 */
import { controllerPolicyObjects, DEFAULT_CONTROLLER_POLICY_SCOPE } from '../../src/apiserver/authorization/rbac/default-policy.js';
import { renderChart } from './helm-chart.js';
import { CHART_DIR, type Obj } from './manifests.js';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

/** `group/resource verb` for every combination the roles grant; signers also per name. */
function grants(roles: Obj[]): { verbs: Set<string>; signers: Set<string> } {
  const verbs = new Set<string>();
  const signers = new Set<string>();
  for (const rule of roles.flatMap((r) => (r.rules ?? []) as Rule[])) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs) {
          verbs.add(`${group}/${resource} ${verb}`);
          if (resource === 'signers') for (const name of rule.resourceNames ?? []) signers.add(`${verb} ${name}`);
        }
      }
    }
  }
  return { verbs, signers };
}

it("grants up's controller identity what the chart grants the controller, for the same configuration", () => {
  // up signs the client signers with the cluster CA: the chart does with ca.existingSecret.
  const values = { ca: { existingSecret: 'cluster-ca' }, servingApprover: { enabled: true }, workloadSigner: { enabled: true }, metrics: { secure: { enabled: true } } };
  const chart = renderChart(CHART_DIR, { releaseName: 'kube-identity', namespace: 'kube-identity', values }).docs.map((d) => d.doc);
  // metrics-reader is for Prometheus, bound by the operator: not the controller's.
  const chartRoles = chart.filter((d) => (d.kind === 'ClusterRole' || d.kind === 'Role') && !String((d.metadata as Obj).name).endsWith(':metrics-reader'));
  const server = controllerPolicyObjects({ ...DEFAULT_CONTROLLER_POLICY_SCOPE, metricsAuth: true }).filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');
  const fromChart = grants(chartRoles);
  const fromServer = grants(server as Obj[]);
  expect([...fromServer.verbs].sort()).toEqual([...fromChart.verbs].sort());
  expect([...fromServer.signers].sort()).toEqual([...fromChart.signers].sort());
  // And neither grants anything a CSR controller has no business with.
  for (const verb of fromServer.verbs) expect(verb).not.toMatch(/^(\/secrets|rbac\.authorization\.k8s\.io\/|\/pods|\/serviceaccounts)|\*/);
});

it("names the chart's own Lease and trust bundle ConfigMap, wherever the values put them", () => {
  const rendered = (values: Obj): Obj[] => renderChart(CHART_DIR, { releaseName: 'kube-identity', namespace: 'kube-identity', values }).docs.map((d) => d.doc);
  const named = (docs: Obj[], resource: string): string[] =>
    docs
      .filter((d) => d.kind === 'Role')
      .flatMap((d) => (d.rules ?? []) as Rule[])
      .filter((r) => r.resources?.includes(resource) && r.verbs.includes('update'))
      .flatMap((r) => r.resourceNames ?? []);
  const defaults = rendered({});
  expect([named(defaults, 'leases'), named(defaults, 'configmaps')]).toEqual([['kube-identity-controller'], ['kube-identity-trust-bundle']]);
  const moved = rendered({ leaderElection: { leaseName: 'ids' }, config: { trustBundleConfigMapName: 'bundles' } });
  expect([named(moved, 'leases'), named(moved, 'configmaps')]).toEqual([['ids'], ['bundles']]);
  expect(named(rendered({ config: { leaderElectionId: 'from-config' } }), 'leases')).toEqual(['from-config']);
});
