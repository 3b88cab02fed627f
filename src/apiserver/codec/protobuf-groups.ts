/**
 * Field tables of the named-group messages we serve: authentication, authorization, certificates,
 * coordination, apps (ControllerRevision), events and rbac, all v1.
 */
import type { MessageDesc } from './protobuf-schema.js';

const SAR_SPEC: MessageDesc = {
  resourceAttributes: [1, 'ResourceAttributes'],
  nonResourceAttributes: [2, 'NonResourceAttributes'],
  user: [3, 'string'],
  groups: [4, 'string', 'r'],
  extra: [5, 'ExtraValue', 'm'],
  uid: [6, 'string'],
};

export const GROUP_MESSAGES: Readonly<Record<string, MessageDesc>> = {
  // authentication.k8s.io/v1
  TokenRequest: { metadata: [1, 'ObjectMeta'], spec: [2, 'TokenRequestSpec'], status: [3, 'TokenRequestStatus'] },
  TokenRequestSpec: {
    audiences: [1, 'string', 'r'],
    boundObjectRef: [3, 'BoundObjectReference'],
    expirationSeconds: [4, 'int64', 'p'],
    attestations: [5, 'ExtraValue', 'm'],
  },
  BoundObjectReference: { kind: [1, 'string'], apiVersion: [2, 'string'], name: [3, 'string'], uid: [4, 'string'] },
  TokenRequestStatus: { token: [1, 'string'], expirationTimestamp: [2, 'Time'] },
  TokenReview: { metadata: [1, 'ObjectMeta'], spec: [2, 'TokenReviewSpec'], status: [3, 'TokenReviewStatus'] },
  TokenReviewSpec: { token: [1, 'string'], audiences: [2, 'string', 'r'] },
  TokenReviewStatus: {
    authenticated: [1, 'bool'],
    user: [2, 'UserInfo'],
    error: [3, 'string'],
    audiences: [4, 'string', 'r'],
  },
  UserInfo: { username: [1, 'string'], uid: [2, 'string'], groups: [3, 'string', 'r'], extra: [4, 'ExtraValue', 'm'] },
  SelfSubjectReview: { metadata: [1, 'ObjectMeta'], status: [2, 'SelfSubjectReviewStatus'] },
  SelfSubjectReviewStatus: { userInfo: [1, 'UserInfo'] },
  // authorization.k8s.io/v1
  SubjectAccessReview: {
    metadata: [1, 'ObjectMeta'],
    spec: [2, 'SubjectAccessReviewSpec'],
    status: [3, 'SubjectAccessReviewStatus'],
  },
  LocalSubjectAccessReview: {
    metadata: [1, 'ObjectMeta'],
    spec: [2, 'SubjectAccessReviewSpec'],
    status: [3, 'SubjectAccessReviewStatus'],
  },
  SubjectAccessReviewSpec: SAR_SPEC,
  SelfSubjectAccessReview: {
    metadata: [1, 'ObjectMeta'],
    spec: [2, 'SelfSubjectAccessReviewSpec'],
    status: [3, 'SubjectAccessReviewStatus'],
  },
  SelfSubjectAccessReviewSpec: {
    resourceAttributes: [1, 'ResourceAttributes'],
    nonResourceAttributes: [2, 'NonResourceAttributes'],
  },
  ResourceAttributes: {
    namespace: [1, 'string'],
    verb: [2, 'string'],
    group: [3, 'string'],
    version: [4, 'string'],
    resource: [5, 'string'],
    subresource: [6, 'string'],
    name: [7, 'string'],
    fieldSelector: [8, 'FieldSelectorAttributes'],
    labelSelector: [9, 'LabelSelectorAttributes'],
  },
  FieldSelectorAttributes: { rawSelector: [1, 'string'], requirements: [2, 'FieldSelectorRequirement', 'r'] },
  FieldSelectorRequirement: { key: [1, 'string'], operator: [2, 'string'], values: [3, 'string', 'r'] },
  LabelSelectorAttributes: { rawSelector: [1, 'string'], requirements: [2, 'LabelSelectorRequirement', 'r'] },
  NonResourceAttributes: { path: [1, 'string'], verb: [2, 'string'] },
  SubjectAccessReviewStatus: {
    allowed: [1, 'bool'],
    reason: [2, 'string'],
    evaluationError: [3, 'string'],
    denied: [4, 'bool'],
  },
  SelfSubjectRulesReview: {
    metadata: [1, 'ObjectMeta'],
    spec: [2, 'SelfSubjectRulesReviewSpec'],
    status: [3, 'SubjectRulesReviewStatus'],
  },
  SelfSubjectRulesReviewSpec: { namespace: [1, 'string'] },
  SubjectRulesReviewStatus: {
    resourceRules: [1, 'ResourceRule', 'r'],
    nonResourceRules: [2, 'NonResourceRule', 'r'],
    incomplete: [3, 'bool'],
    evaluationError: [4, 'string'],
  },
  ResourceRule: {
    verbs: [1, 'string', 'r'],
    apiGroups: [2, 'string', 'r'],
    resources: [3, 'string', 'r'],
    resourceNames: [4, 'string', 'r'],
  },
  NonResourceRule: { verbs: [1, 'string', 'r'], nonResourceURLs: [2, 'string', 'r'] },
  // certificates.k8s.io/v1
  CertificateSigningRequest: {
    metadata: [1, 'ObjectMeta'],
    spec: [2, 'CertificateSigningRequestSpec'],
    status: [3, 'CertificateSigningRequestStatus'],
  },
  CertificateSigningRequestSpec: {
    request: [1, 'bytes'],
    username: [2, 'string'],
    uid: [3, 'string'],
    groups: [4, 'string', 'r'],
    usages: [5, 'string', 'r'],
    extra: [6, 'ExtraValue', 'm'],
    signerName: [7, 'string'],
    expirationSeconds: [8, 'int32', 'p'],
  },
  CertificateSigningRequestStatus: {
    conditions: [1, 'CertificateSigningRequestCondition', 'r'],
    certificate: [2, 'bytes'],
  },
  CertificateSigningRequestCondition: {
    type: [1, 'string'],
    reason: [2, 'string'],
    message: [3, 'string'],
    lastUpdateTime: [4, 'Time'],
    lastTransitionTime: [5, 'Time'],
    status: [6, 'string'],
  },
  // certificates.k8s.io ClusterTrustBundle: v1, v1beta1 and v1alpha1 (the same messages)
  ClusterTrustBundle: { metadata: [1, 'ObjectMeta'], spec: [2, 'ClusterTrustBundleSpec'] },
  ClusterTrustBundleSpec: { signerName: [1, 'string'], trustBundle: [2, 'string'] },
  // coordination.k8s.io/v1
  Lease: { metadata: [1, 'ObjectMeta'], spec: [2, 'LeaseSpec'] },
  LeaseSpec: {
    holderIdentity: [1, 'string', 'p'],
    leaseDurationSeconds: [2, 'int32', 'p'],
    acquireTime: [3, 'MicroTime'],
    renewTime: [4, 'MicroTime'],
    leaseTransitions: [5, 'int32', 'p'],
    strategy: [6, 'string', 'p'],
    preferredHolder: [7, 'string', 'p'],
  },
  // apps/v1
  ControllerRevision: { metadata: [1, 'ObjectMeta'], data: [2, 'RawExtension'], revision: [3, 'int64'] },
  // events.k8s.io/v1
  EventsEvent: {
    metadata: [1, 'ObjectMeta'],
    eventTime: [2, 'MicroTime'],
    series: [3, 'EventsEventSeries'],
    reportingController: [4, 'string'],
    reportingInstance: [5, 'string'],
    action: [6, 'string'],
    reason: [7, 'string'],
    regarding: [8, 'ObjectReference'],
    related: [9, 'ObjectReference'],
    note: [10, 'string'],
    type: [11, 'string'],
    deprecatedSource: [12, 'EventSource'],
    deprecatedFirstTimestamp: [13, 'Time'],
    deprecatedLastTimestamp: [14, 'Time'],
    deprecatedCount: [15, 'int32'],
  },
  EventsEventSeries: { count: [1, 'int32'], lastObservedTime: [2, 'MicroTime'] },
  // rbac.authorization.k8s.io/v1
  PolicyRule: {
    verbs: [1, 'string', 'r'],
    apiGroups: [2, 'string', 'r'],
    resources: [3, 'string', 'r'],
    resourceNames: [4, 'string', 'r'],
    nonResourceURLs: [5, 'string', 'r'],
  },
  Role: { metadata: [1, 'ObjectMeta'], rules: [2, 'PolicyRule', 'r'] },
  ClusterRole: { metadata: [1, 'ObjectMeta'], rules: [2, 'PolicyRule', 'r'], aggregationRule: [3, 'AggregationRule'] },
  AggregationRule: { clusterRoleSelectors: [1, 'LabelSelector', 'r'] },
  Subject: { kind: [1, 'string'], apiGroup: [2, 'string'], name: [3, 'string'], namespace: [4, 'string'] },
  RoleRef: { apiGroup: [1, 'string'], kind: [2, 'string'], name: [3, 'string'] },
  RoleBinding: { metadata: [1, 'ObjectMeta'], subjects: [2, 'Subject', 'r'], roleRef: [3, 'RoleRef'] },
  ClusterRoleBinding: { metadata: [1, 'ObjectMeta'], subjects: [2, 'Subject', 'r'], roleRef: [3, 'RoleRef'] },
};
