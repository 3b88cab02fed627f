/**
 * The default RBAC objects a kubeadm-built cluster has for the resources this server serves
 * (upstream's bootstrappolicy plus the one kubeadm binding for node bootstrap). The server creates
 * each one at start if absent. kubeadm's CSR auto-approval bindings are not upstream defaults, so
 * they are offered separately for installations that want kubeadm's behaviour.
 */
import { SIGNER_KUBE_APISERVER_CLIENT, SIGNER_KUBE_APISERVER_CLIENT_KUBELET, SIGNER_KUBELET_SERVING } from '../../../api/certificates.js';
import type { KObject } from '../../../api/meta.js';
import type { PolicyRule } from '../../../api/rbac.js';

const RBAC_V1 = 'rbac.authorization.k8s.io/v1';
const CERTS = 'certificates.k8s.io';

type Rule = Partial<PolicyRule> & { verbs: string[] };

function meta(name: string, rbacDefault = true): KObject['metadata'] {
  return rbacDefault
    ? {
        name,
        labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
        annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
      }
    : { name };
}

function clusterRole(name: string, rules: Rule[], rbacDefault = true): KObject {
  return { apiVersion: RBAC_V1, kind: 'ClusterRole', metadata: meta(name, rbacDefault), rules };
}

type SubjectSpec = { kind: 'Group' | 'User'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };

function binding(name: string, role: string, subjects: SubjectSpec[], rbacDefault = true): KObject {
  return {
    apiVersion: RBAC_V1,
    kind: 'ClusterRoleBinding',
    metadata: meta(name, rbacDefault),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: subjects.map((s) => (s.kind === 'ServiceAccount' ? s : { apiGroup: 'rbac.authorization.k8s.io', ...s })),
  };
}

/** A default binding upstream keeps without subjects (system:node since the Node authorizer). */
function unboundBinding(name: string): KObject {
  const b = binding(name, name, []);
  delete b.subjects;
  return b;
}

const group = (name: string): SubjectSpec => ({ kind: 'Group', name });

/**
 * The group kubeadm's node-join bootstrap tokens carry (`auth-extra-groups`): the only bootstrap
 * tokens that may create a kubelet CSR and get it auto-approved. Other bootstrap tokens still
 * authenticate (as system:bootstrappers) but join no node.
 */
export const KUBEADM_NODE_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';

function approver(name: string, signer: string): KObject {
  return clusterRole(`system:certificates.k8s.io:${name}`, [
    { apiGroups: [CERTS], resources: ['signers'], resourceNames: [signer], verbs: ['approve'] },
  ]);
}

/** system:public-info-viewer's paths, open to everyone; also the only ones anonymous requests may reach. */
export const PUBLIC_INFO_PATHS = ['/healthz', '/livez', '/readyz', '/version', '/version/'];
const DISCOVERY = ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', ...PUBLIC_INFO_PATHS];
const HEALTH = ['/healthz', '/livez', '/readyz'];
const OIDC = ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/'];

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

function policyRule(verbs: string[], apiGroups: string[], resources: string[]): PolicyRule {
  return { verbs, apiGroups, resources, resourceNames: [], nonResourceURLs: [] };
}

/** Upstream's NodeRules: the system:node ClusterRole and the static part of the Node authorizer. */
export const NODE_RULES: readonly PolicyRule[] = [
  policyRule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
  policyRule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews']),
  policyRule(READ, [''], ['services']),
  policyRule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
  policyRule(['update', 'patch'], [''], ['nodes/status']),
  policyRule(['update', 'patch'], [''], ['nodes']),
  policyRule(['create', 'update', 'patch'], [''], ['events']),
  policyRule(READ, [''], ['pods']),
  policyRule(['create', 'delete'], [''], ['pods']),
  policyRule(['update', 'patch'], [''], ['pods/status']),
  policyRule(['create'], [''], ['pods/eviction']),
  policyRule(READ, [''], ['secrets', 'configmaps']),
  policyRule(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
  policyRule(['get'], [''], ['endpoints']),
  policyRule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
  // For the kubelet's clusterTrustBundle projected volumes (upstream grants nodes, and nobody else, by default).
  policyRule(READ, ['certificates.k8s.io'], ['clustertrustbundles']),
  // For the kubelet's podCertificate projected volumes (the Node authorizer narrows reads to its own).
  policyRule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['podcertificaterequests']),
  policyRule(['get', 'create', 'update', 'patch', 'delete'], ['coordination.k8s.io'], ['leases']),
  policyRule(['create'], [''], ['serviceaccounts/token']),
];

const AGGREGATE_TO = (role: string): string => `rbac.authorization.k8s.io/aggregate-to-${role}`;

/** A ClusterRole whose rules the clusterrole-aggregation controller gathers from the labelled ones. */
function aggregatedRole(name: string, labels: Record<string, string> = {}): KObject {
  const role = clusterRole(name, []);
  role.metadata = { ...role.metadata, labels: { ...role.metadata?.labels, ...labels } };
  role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_TO(name)]: 'true' } }] };
  return role;
}

function aggregateTo(name: string, rules: Rule[]): KObject {
  const role = clusterRole(`system:aggregate-to-${name}`, rules);
  role.metadata = { ...role.metadata, labels: { ...role.metadata?.labels, [AGGREGATE_TO(name)]: 'true' } };
  return role;
}

/**
 * The user-facing roles as upstream chains them (view → edit → admin, each aggregated from
 * `aggregate-to-*` labels), with the system:aggregate-to-* parts limited to the kinds served here.
 */
function userFacingRoles(): KObject[] {
  return [
    aggregatedRole('admin'),
    aggregatedRole('edit', { [AGGREGATE_TO('admin')]: 'true' }),
    aggregatedRole('view', { [AGGREGATE_TO('edit')]: 'true' }),
    aggregateTo('admin', [
      { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings', 'roles'], verbs: [...WRITE, ...READ] },
    ]),
    aggregateTo('edit', [
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
      { apiGroups: [''], resources: ['configmaps', 'pods', 'secrets', 'serviceaccounts', 'services'], verbs: WRITE },
      { apiGroups: [''], resources: ['secrets'], verbs: READ },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
    ]),
    aggregateTo('view', [
      {
        apiGroups: [''],
        resources: ['configmaps', 'events', 'namespaces', 'namespaces/status', 'pods', 'pods/status', 'serviceaccounts', 'services', 'services/status'],
        verbs: READ,
      },
      { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: READ },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: READ },
    ]),
  ];
}

/**
 * ClusterTrustBundles are public within the cluster: the API documents them as readable by every
 * authenticated user (any pod can mount one), while kube-apiserver's bootstrap policy grants only nodes.
 * This role and binding make the documented promise true; not upstream defaults, so an operator who wants
 * bundles hidden empties the binding's subjects (kept across restarts: defaults are created only when absent).
 */
const CTB_READER = 'kube-identity:cluster-trust-bundle-reader';

function clusterRoles(): KObject[] {
  return [
    ...userFacingRoles(),
    clusterRole('cluster-admin', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]),
    clusterRole('system:discovery', [{ nonResourceURLs: DISCOVERY, verbs: ['get'] }]),
    clusterRole('system:public-info-viewer', [{ nonResourceURLs: PUBLIC_INFO_PATHS, verbs: ['get'] }]),
    // Upstream's role for scrapers and probes: /metrics and each health check by name (/readyz/etcd).
    clusterRole('system:monitoring', [{ nonResourceURLs: ['/metrics', ...HEALTH, ...HEALTH.map((p) => `${p}/*`)], verbs: ['get'] }]),
    clusterRole('system:basic-user', [
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ]),
    clusterRole('system:auth-delegator', [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]),
    clusterRole('system:service-account-issuer-discovery', [{ nonResourceURLs: OIDC, verbs: ['get'] }]),
    // The Node authorizer's static rules, as upstream publishes them (bound to nobody since 1.8).
    clusterRole('system:node', NODE_RULES.map(({ verbs, apiGroups, resources }) => ({ verbs, apiGroups, resources }))),
    clusterRole('system:node-bootstrapper', [
      { apiGroups: [CERTS], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] },
    ]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [
      { apiGroups: [CERTS], resources: ['certificatesigningrequests/nodeclient'], verbs: ['create'] },
    ]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [
      { apiGroups: [CERTS], resources: ['certificatesigningrequests/selfnodeclient'], verbs: ['create'] },
    ]),
    approver('legacy-unknown-approver', 'kubernetes.io/legacy-unknown'),
    approver('kubelet-serving-approver', 'kubernetes.io/kubelet-serving'),
    approver('kube-apiserver-client-approver', 'kubernetes.io/kube-apiserver-client'),
    approver('kube-apiserver-client-kubelet-approver', 'kubernetes.io/kube-apiserver-client-kubelet'),
    clusterRole('system:controller:certificate-controller', [
      { apiGroups: [CERTS], resources: ['certificatesigningrequests'], verbs: ['delete', 'get', 'list', 'watch'] },
      { apiGroups: [CERTS], resources: ['certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['update'] },
      { apiGroups: [CERTS], resources: ['signers'], resourceNames: ['kubernetes.io/kube-apiserver-client-kubelet'], verbs: ['approve'] },
      {
        apiGroups: [CERTS],
        resources: ['signers'],
        resourceNames: [
          'kubernetes.io/kube-apiserver-client',
          'kubernetes.io/kube-apiserver-client-kubelet',
          'kubernetes.io/kubelet-serving',
          'kubernetes.io/legacy-unknown',
        ],
        verbs: ['sign'],
      },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    ]),
    clusterRole(CTB_READER, [{ apiGroups: [CERTS], resources: ['clustertrustbundles'], verbs: ['get', 'list', 'watch'] }], false),
  ];
}

function clusterRoleBindings(): KObject[] {
  return [
    binding('cluster-admin', 'cluster-admin', [group('system:masters')]),
    binding('system:discovery', 'system:discovery', [group('system:authenticated')]),
    binding('system:basic-user', 'system:basic-user', [group('system:authenticated')]),
    binding('system:public-info-viewer', 'system:public-info-viewer', [
      group('system:authenticated'),
      group('system:unauthenticated'),
    ]),
    binding('system:monitoring', 'system:monitoring', [group('system:monitoring')]),
    binding('system:service-account-issuer-discovery', 'system:service-account-issuer-discovery', [
      group('system:serviceaccounts'),
    ]),
    unboundBinding('system:node'),
    binding('system:controller:certificate-controller', 'system:controller:certificate-controller', [
      { kind: 'ServiceAccount', name: 'certificate-controller', namespace: 'kube-system' },
    ]),
    // kubeadm's binding that lets its node-join tokens create CSRs: only tokens carrying the group
    // through auth-extra-groups, never every bootstrap token.
    binding('kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', [group(KUBEADM_NODE_TOKEN_GROUP)], false),
    binding(CTB_READER, CTB_READER, [group('system:authenticated')], false),
  ];
}

/**
 * The user kube-identity's own controller acts as when the server runs it (`up`), as
 * kube-controller-manager acts as system:kube-controller-manager: a client certificate with this
 * common name and no groups, bound below to what the controller does and nothing else.
 */
export const KUBE_IDENTITY_CONTROLLER_USER = 'system:kube-identity-controller';

/** What the controller runs with, which decides what its identity may do. */
export interface ControllerPolicyScope {
  /** Signers whose approved CSRs it issues (`sign`) and whose CAs it publishes (`attest`). */
  csrSigners: string[];
  /** Signers whose CSRs it approves: the kubelet client signer, kubelet-serving with the serving approver. */
  approvedSigners: string[];
  /** The workload signer's names (PodCertificateRequests: `sign`, CA bundles: `attest`); none when off. */
  workloadSigners: string[];
  /** The serving approver reads Nodes and the kubernetes Service's addresses. */
  servingApprover: boolean;
  /** --metrics-secure: callers of /metrics are checked with TokenReviews. */
  metricsAuth: boolean;
  /** Where its Lease, signer revisions and trust bundle ConfigMap are: one namespace (`up` keeps all three in kube-system). */
  namespace: string;
  /** Its leader election Lease and its trust bundle ConfigMap, the only ones it reads or writes there. */
  leaseName: string;
  trustBundleConfigMap: string;
}

/** `up`'s controller as it starts by default; the identity every server's default policy knows. */
export const DEFAULT_CONTROLLER_POLICY_SCOPE: ControllerPolicyScope = {
  csrSigners: [SIGNER_KUBE_APISERVER_CLIENT, SIGNER_KUBE_APISERVER_CLIENT_KUBELET, SIGNER_KUBELET_SERVING],
  approvedSigners: [SIGNER_KUBE_APISERVER_CLIENT_KUBELET, SIGNER_KUBELET_SERVING],
  workloadSigners: ['kube-identity.io/workload'],
  servingApprover: true,
  metricsAuth: false,
  namespace: 'kube-system',
  leaseName: 'kube-identity-controller',
  trustBundleConfigMap: 'kube-identity-trust-bundle',
};

/** Upstream's eventsRule: the Event recorder creates, and updates a repeated Event's count. */
const EVENTS_RULE: Rule = { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'update', 'patch'] };

/**
 * The controller's identity, rule for rule what it calls (as upstream's controller roles): the
 * certificate-controller's CSR rules on its own signers, the PodCertificateRequest signer and
 * cleaner, ClusterTrustBundles for the signers it attests, and, in its namespace only, its Lease,
 * signer ControllerRevisions and trust bundle ConfigMap. Never Secrets, RBAC, Pods, or a signer
 * it does not run.
 */
export function controllerPolicyObjects(scope: ControllerPolicyScope): KObject[] {
  const name = KUBE_IDENTITY_CONTROLLER_USER;
  const signed = [...new Set([...scope.csrSigners, ...scope.workloadSigners])];
  const rules: Rule[] = [
    { apiGroups: [CERTS], resources: ['certificatesigningrequests'], verbs: ['get', 'list', 'watch', 'delete'] },
    { apiGroups: [CERTS], resources: ['certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['update'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    { apiGroups: [CERTS], resources: ['podcertificaterequests'], verbs: ['get', 'list', 'watch', 'delete'] },
    { apiGroups: [CERTS], resources: ['clustertrustbundles'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
    EVENTS_RULE,
  ];
  if (scope.approvedSigners.length > 0) rules.push({ apiGroups: [CERTS], resources: ['signers'], resourceNames: [...scope.approvedSigners], verbs: ['approve'] });
  if (signed.length > 0) rules.push({ apiGroups: [CERTS], resources: ['signers'], resourceNames: signed, verbs: ['sign', 'attest'] });
  if (scope.workloadSigners.length > 0) rules.push({ apiGroups: [CERTS], resources: ['podcertificaterequests/status'], verbs: ['update'] });
  if (scope.servingApprover) {
    rules.push(
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['services', 'endpoints'], resourceNames: ['kubernetes'], verbs: ['get'] },
    );
  }
  if (scope.metricsAuth) rules.push({ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] });
  const user: SubjectSpec = { kind: 'User', name };
  const role: KObject = {
    apiVersion: RBAC_V1,
    kind: 'Role',
    metadata: { ...meta(name), namespace: scope.namespace },
    // As upstream's leader-locking roles: a create cannot be limited to a name, the rest is.
    rules: [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [scope.leaseName], verbs: ['get', 'update'] },
      { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [scope.trustBundleConfigMap], verbs: ['get', 'update'] },
    ],
  };
  const roleBinding: KObject = {
    ...binding(name, name, [user]),
    kind: 'RoleBinding',
    metadata: { ...meta(name), namespace: scope.namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
  };
  return [clusterRole(name, rules), binding(name, name, [user]), role, roleBinding];
}

/** Every default RBAC object to create at start, roles first; the controller's identity for `scope`. */
export function defaultPolicyObjects(scope: ControllerPolicyScope = DEFAULT_CONTROLLER_POLICY_SCOPE): KObject[] {
  return [...clusterRoles(), ...clusterRoleBindings(), ...controllerPolicyObjects(scope)];
}

/**
 * kubeadm's auto-approval bindings (first client certificate for its node-join tokens, renewals
 * for nodes). Not upstream defaults: opt in explicitly.
 */
export function kubeadmAutoApproveBindings(): KObject[] {
  return [
    binding('kubeadm:node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', [group(KUBEADM_NODE_TOKEN_GROUP)], false),
    binding('kubeadm:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [group('system:nodes')], false),
  ];
}
