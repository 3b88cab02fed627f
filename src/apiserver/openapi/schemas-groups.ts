/** certificates (ClusterTrustBundle in each served version), coordination, apps (ControllerRevision), events and rbac, all v1. */
import { CTB_VERSIONS } from '../../api/trust-bundles.js';
import {
  arr,
  bytes,
  CORE,
  enumStr,
  int32,
  int64,
  kindAndList,
  kindSchema,
  map,
  META,
  microTime,
  obj,
  ref,
  type Schemas,
  str,
  time,
} from './builder.js';

const CERT = 'io.k8s.api.certificates.v1.';
const RBAC = 'io.k8s.api.rbac.v1.';
const gvk = (group: string, kind: string) => ({ group, version: 'v1', kind });
const csr = gvk('certificates.k8s.io', 'CertificateSigningRequest');
const rbac = (kind: string) => gvk('rbac.authorization.k8s.io', kind);

const csrSpec = obj(
  {
    expirationSeconds: int32('Requested duration of validity of the issued certificate (minimum 600).'),
    extra: map(arr(str(), { goType: 'v1.ExtraValue' }), 'Extra attributes of the requesting user; set by the server.'),
    groups: arr(str(), { description: 'Groups of the requesting user; set by the server.' }),
    request: bytes('A PKCS#10 certificate signing request in a "CERTIFICATE REQUEST" PEM block, base64 encoded in JSON.'),
    signerName: str('The requested signer, a qualified name such as kubernetes.io/kube-apiserver-client-kubelet.'),
    uid: str('UID of the requesting user; set by the server.'),
    usages: arr(enumStr('v1.KeyUsage'), { description: 'Key usages requested in the issued certificate.' }),
    username: str('Name of the requesting user; set by the server.'),
  },
  { required: ['request', 'signerName'], description: 'CertificateSigningRequestSpec contains the certificate request.' },
);

const csrCondition = obj(
  {
    lastTransitionTime: time(),
    lastUpdateTime: time(),
    message: str(),
    reason: str(),
    status: enumStr('v1.ConditionStatus', 'True, False or Unknown.'),
    type: enumStr('v1.RequestConditionType', 'Approved, Denied or Failed.'),
  },
  { required: ['type', 'status'], description: 'CertificateSigningRequestCondition describes a condition of a CertificateSigningRequest object' },
);

const csrStatus = obj(
  {
    certificate: bytes('The issued certificate, PEM encoded; base64 encoded in JSON.'),
    conditions: arr(ref(`${CERT}CertificateSigningRequestCondition`), {
      listType: 'map',
      mapKeys: ['type'],
      description: 'Approved, Denied and Failed conditions.',
    }),
  },
  { description: 'CertificateSigningRequestStatus contains conditions used to indicate approved/denied/failed status of the request, and the issued certificate.' },
);

const policyRule = obj(
  {
    apiGroups: arr(str()),
    nonResourceURLs: arr(str()),
    resourceNames: arr(str()),
    resources: arr(str()),
    verbs: arr(str()),
  },
  { required: ['verbs'] },
);

const bindingProps = {
  roleRef: ref(`${RBAC}RoleRef`, 'The Role or ClusterRole being granted.'),
  subjects: arr(ref(`${RBAC}Subject`)),
};

/** ClusterTrustBundle and its spec under one version's names (v1, v1beta1 and v1alpha1 are the same). */
function trustBundleSchemas(version: string): Schemas {
  const prefix = `io.k8s.api.certificates.${version}.`;
  const gvk = { group: 'certificates.k8s.io', version, kind: 'ClusterTrustBundle' };
  return {
    [`${prefix}ClusterTrustBundleSpec`]: obj(
      {
        signerName: str('signerName indicates the associated signer, if any. Writing a bundle that sets it needs the `attest` verb on that signer (group certificates.k8s.io, resource signers), and its name must start with the signer name with slashes as colons, then a colon.'),
        trustBundle: str('trustBundle contains the individual X.509 trust anchors for this bundle, as PEM bundle of PEM-wrapped, DER-formatted X.509 certificates: CERTIFICATE blocks only, no PEM block headers, each a CA certificate, none twice.'),
      },
      { required: ['trustBundle'], description: 'ClusterTrustBundleSpec contains the signer and trust anchors.' },
    ),
    ...kindAndList(
      prefix,
      gvk,
      kindSchema(
        gvk,
        { spec: ref(`${prefix}ClusterTrustBundleSpec`, 'spec contains the signer (if any) and trust anchors.') },
        { required: ['spec'], description: 'ClusterTrustBundle is a cluster-scoped container for X.509 trust anchors (root certificates), readable by the workloads that mount it.' },
      ),
    ),
  };
}

export const GROUP_SCHEMAS: Schemas = {
  ...Object.fromEntries(CTB_VERSIONS.flatMap((v) => Object.entries(trustBundleSchemas(v)))),
  [`${CERT}CertificateSigningRequestSpec`]: csrSpec,
  [`${CERT}CertificateSigningRequestStatus`]: csrStatus,
  [`${CERT}CertificateSigningRequestCondition`]: csrCondition,
  ...kindAndList(
    CERT,
    csr,
    kindSchema(
      csr,
      {
        spec: ref(`${CERT}CertificateSigningRequestSpec`, 'spec contains the certificate request, and is immutable after creation.'),
        status: ref(`${CERT}CertificateSigningRequestStatus`, 'status contains information about whether the request is approved or denied, and the certificate issued by the signer, or the failure condition indicating signer failure.'),
      },
      { required: ['spec'], description: 'CertificateSigningRequest objects provide a mechanism to obtain x509 certificates.' },
    ),
  ),
  ...kindAndList(
    'io.k8s.api.coordination.v1.',
    gvk('coordination.k8s.io', 'Lease'),
    kindSchema(
      gvk('coordination.k8s.io', 'Lease'),
      { spec: ref('io.k8s.api.coordination.v1.LeaseSpec', 'spec contains the specification of the Lease.') },
      { description: 'Lease defines a lease concept.' },
    ),
  ),
  'io.k8s.api.coordination.v1.LeaseSpec': obj(
    {
      acquireTime: microTime(),
      holderIdentity: str(),
      leaseDurationSeconds: int32(),
      leaseTransitions: int32(),
      preferredHolder: str(),
      renewTime: microTime(),
      strategy: enumStr('v1.CoordinatedLeaseStrategy'),
    },
    { description: 'LeaseSpec is a specification of a Lease.' },
  ),
  ...kindAndList(
    'io.k8s.api.apps.v1.',
    gvk('apps', 'ControllerRevision'),
    kindSchema(
      gvk('apps', 'ControllerRevision'),
      {
        data: ref('io.k8s.apimachinery.pkg.runtime.RawExtension', 'The serialized state.'),
        revision: int64('The revision of the state represented by data.'),
      },
      { required: ['revision'], description: 'ControllerRevision implements an immutable snapshot of state data.' },
    ),
  ),
  ...kindAndList(
    'io.k8s.api.events.v1.',
    gvk('events.k8s.io', 'Event'),
    kindSchema(
      gvk('events.k8s.io', 'Event'),
      {
        action: str(),
        deprecatedCount: int32(),
        deprecatedFirstTimestamp: time(),
        deprecatedLastTimestamp: time(),
        deprecatedSource: ref(`${CORE}EventSource`),
        eventTime: microTime(),
        note: str(),
        reason: str(),
        regarding: ref(`${CORE}ObjectReference`),
        related: ref(`${CORE}ObjectReference`),
        reportingController: str(),
        reportingInstance: str(),
        series: ref('io.k8s.api.events.v1.EventSeries', 'series is data about the Event series this event represents or nil if it\'s a singleton Event.'),
        type: str(),
      },
      { required: ['eventTime'], description: 'Event is a report of an event somewhere in the cluster.' },
    ),
  ),
  'io.k8s.api.events.v1.EventSeries': obj(
    { count: int32(), lastObservedTime: microTime() },
    { required: ['count', 'lastObservedTime'], description: 'EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.' },
  ),
  [`${RBAC}PolicyRule`]: policyRule,
  [`${RBAC}AggregationRule`]: obj(
    { clusterRoleSelectors: arr(ref(`${META}LabelSelector`)) },
    { description: 'AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole' },
  ),
  [`${RBAC}Subject`]: obj(
    { apiGroup: str(), kind: str('User, Group or ServiceAccount.'), name: str(), namespace: str() },
    { required: ['kind', 'name'] },
  ),
  [`${RBAC}RoleRef`]: obj({ apiGroup: str(), kind: str(), name: str() }, { required: ['apiGroup', 'kind', 'name'] }),
  ...kindAndList(
    RBAC,
    rbac('Role'),
    kindSchema(
      rbac('Role'),
      { rules: arr(ref(`${RBAC}PolicyRule`)) },
      { description: 'Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.' },
    ),
  ),
  ...kindAndList(
    RBAC,
    rbac('ClusterRole'),
    kindSchema(
      rbac('ClusterRole'),
      {
        aggregationRule: ref(`${RBAC}AggregationRule`, 'AggregationRule is an optional field that describes how to build the Rules for this ClusterRole.'),
        rules: arr(ref(`${RBAC}PolicyRule`)),
      },
      { description: 'ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.' },
    ),
  ),
  ...kindAndList(
    RBAC,
    rbac('RoleBinding'),
    kindSchema(rbac('RoleBinding'), bindingProps, {
      required: ['roleRef'],
      description: 'RoleBinding references a Role or ClusterRole, but does not contain it, and gives its rules to the subjects in its own namespace.',
    }),
  ),
  ...kindAndList(
    RBAC,
    rbac('ClusterRoleBinding'),
    kindSchema(rbac('ClusterRoleBinding'), bindingProps, {
      required: ['roleRef'],
      description: 'ClusterRoleBinding references a ClusterRole, but does not contain it, and gives its rules to the subjects cluster-wide.',
    }),
  ),
};
