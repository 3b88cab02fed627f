/**
 * The table of every resource the embedded API server serves. Routing, discovery, OpenAPI, RBAC
 * and storage keys are all derived from it, so adding a kind is one entry here plus a strategy.
 */

import type { KObject } from './meta.js';
import { PCR_KIND, PCR_RESOURCE, PCR_VERSIONS } from './pod-certificates.js';
import { CTB_KIND, CTB_RESOURCE, CTB_VERSIONS } from './trust-bundles.js';

export type Verb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'deletecollection';

export interface SubresourceInfo {
  name: string;
  /** The kind sent and returned on this subresource (TokenRequest for serviceaccounts/token). */
  kind: string;
  group: string;
  version: string;
  verbs: Verb[];
}

export interface ResourceInfo {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  subresources?: SubresourceInfo[];
  /**
   * DELETE answers the object rather than a Status: upstream's stores with ReturnDeletedObject
   * (pods, services, serviceaccounts, namespaces). The served OpenAPI says the same.
   */
  returnsDeletedObject?: boolean;
}

declare const OBJECT_TYPE: unique symbol;

/**
 * A resource that names the wire type `T` of its objects, so typed reads of its storage
 * (ObjectReader) return T. The type exists only for the compiler: any ResourceInfo is one, and the
 * declaration that names a resource's type (`const PODS: ResourceOf<Pod>`) is the one place it
 * takes that on trust, as the store holds only objects its kind's schema accepted.
 */
export type ResourceOf<T extends KObject> = ResourceInfo & { readonly [OBJECT_TYPE]?: T };

const CRUD: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const CREATE_ONLY: Verb[] = ['create'];

function resource(
  group: string,
  version: string,
  kind: string,
  plural: string,
  opts: Partial<Omit<ResourceInfo, 'group' | 'version' | 'kind' | 'plural'>> = {},
): ResourceInfo {
  return {
    group,
    version,
    kind,
    plural,
    listKind: `${kind}List`,
    singular: kind.toLowerCase(),
    namespaced: true,
    verbs: CRUD,
    ...opts,
  };
}

function sub(name: string, kind: string, group: string, version: string, verbs: Verb[]): SubresourceInfo {
  return { name, kind, group, version, verbs };
}

export const RESOURCES: readonly ResourceInfo[] = [
  resource('', 'v1', 'Namespace', 'namespaces', {
    namespaced: false,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['ns'],
    returnsDeletedObject: true,
    subresources: [sub('finalize', 'Namespace', '', 'v1', ['update']), sub('status', 'Namespace', '', 'v1', ['get', 'patch', 'update'])],
  }),
  resource('', 'v1', 'ServiceAccount', 'serviceaccounts', {
    shortNames: ['sa'],
    returnsDeletedObject: true,
    subresources: [sub('token', 'TokenRequest', 'authentication.k8s.io', 'v1', ['create'])],
  }),
  resource('', 'v1', 'Secret', 'secrets'),
  resource('', 'v1', 'ConfigMap', 'configmaps', { shortNames: ['cm'] }),
  resource('', 'v1', 'Service', 'services', {
    shortNames: ['svc'],
    returnsDeletedObject: true,
    categories: ['all'],
    subresources: [sub('status', 'Service', '', 'v1', ['get', 'patch', 'update'])],
  }),
  resource('', 'v1', 'Pod', 'pods', {
    shortNames: ['po'],
    returnsDeletedObject: true,
    categories: ['all'],
    subresources: [sub('binding', 'Binding', '', 'v1', ['create']), sub('status', 'Pod', '', 'v1', ['get', 'patch', 'update'])],
  }),
  resource('', 'v1', 'Node', 'nodes', {
    namespaced: false,
    shortNames: ['no'],
    subresources: [sub('status', 'Node', '', 'v1', ['get', 'patch', 'update'])],
  }),
  resource('', 'v1', 'Event', 'events', { shortNames: ['ev'] }),
  resource('events.k8s.io', 'v1', 'Event', 'events', { shortNames: ['ev'] }),
  resource('coordination.k8s.io', 'v1', 'Lease', 'leases'),
  resource('apps', 'v1', 'ControllerRevision', 'controllerrevisions'),
  resource('certificates.k8s.io', 'v1', 'CertificateSigningRequest', 'certificatesigningrequests', {
    namespaced: false,
    shortNames: ['csr'],
    subresources: [
      sub('approval', 'CertificateSigningRequest', 'certificates.k8s.io', 'v1', ['get', 'patch', 'update']),
      sub('status', 'CertificateSigningRequest', 'certificates.k8s.io', 'v1', ['get', 'patch', 'update']),
    ],
  }),
  // After certificates.k8s.io/v1, so v1 stays the group's preferred version (discovery lists versions in table order).
  ...CTB_VERSIONS.map((v) => resource('certificates.k8s.io', v, CTB_KIND, CTB_RESOURCE, { namespaced: false })),
  ...PCR_VERSIONS.map((v) =>
    resource('certificates.k8s.io', v, PCR_KIND, PCR_RESOURCE, {
      subresources: [sub('status', PCR_KIND, 'certificates.k8s.io', v, ['get', 'patch', 'update'])],
    }),
  ),
  resource('authentication.k8s.io', 'v1', 'TokenReview', 'tokenreviews', {
    namespaced: false,
    verbs: CREATE_ONLY,
  }),
  resource('authentication.k8s.io', 'v1', 'SelfSubjectReview', 'selfsubjectreviews', {
    namespaced: false,
    verbs: CREATE_ONLY,
  }),
  resource('authorization.k8s.io', 'v1', 'SubjectAccessReview', 'subjectaccessreviews', {
    namespaced: false,
    verbs: CREATE_ONLY,
  }),
  resource('authorization.k8s.io', 'v1', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', {
    namespaced: false,
    verbs: CREATE_ONLY,
  }),
  resource('authorization.k8s.io', 'v1', 'LocalSubjectAccessReview', 'localsubjectaccessreviews', {
    verbs: CREATE_ONLY,
  }),
  resource('authorization.k8s.io', 'v1', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', {
    namespaced: false,
    verbs: CREATE_ONLY,
  }),
  resource('rbac.authorization.k8s.io', 'v1', 'Role', 'roles'),
  resource('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings'),
  resource('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', { namespaced: false }),
  resource('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', { namespaced: false }),
];

/** `v1` for the core group, `group/version` otherwise: the apiVersion field of objects. */
export function apiVersionOf(info: { group: string; version: string }): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

/** schema.ParseGroupVersion: `v1` is the core group; a malformed apiVersion has no version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const parts = apiVersion.split('/');
  if (apiVersion === '' || parts.length > 2) return { group: '', version: '' };
  return parts.length === 1 ? { group: '', version: apiVersion } : { group: parts[0] ?? '', version: parts[1] ?? '' };
}

/** `plural` for the core group, `plural.group` otherwise: the group-resource used in messages. */
export function groupResource(info: { group: string; plural: string }): string {
  return info.group === '' ? info.plural : `${info.plural}.${info.group}`;
}

/** Whether a resource is persisted (review kinds are computed per request and never stored). */
export function isStored(info: ResourceInfo): boolean {
  return info.verbs.includes('get');
}

export function findResource(group: string, version: string, plural: string): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}
