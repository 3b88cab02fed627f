/**
 * The OpenAPI v3 documents kube-apiserver publishes beside its group-versions' (`/openapi/v3/api`,
 * `apis`, `apis/<group>`, `version` and the service-account issuer's two): each describes one
 * discovery, version or issuer endpoint, GET only, with the schemas of what it answers (the issuer's
 * documents are strings to it).
 */
import { findGroup, GROUPS } from '../../api/groups.js';
import { arr, META, obj, ref, type Schema, type Schemas, str } from './builder.js';

const VERSION_INFO = 'io.k8s.apimachinery.pkg.version.Info';

const strings = (names: string[]): Record<string, Schema> => Object.fromEntries(names.map((n) => [n, str()]));
const typeMeta = { apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'), kind: str('Kind is a string value representing the REST resource this object represents.') };
const gvk = (kind: string): { gvk: { group: string; version: string; kind: string }[] } => ({ gvk: [{ group: '', version: 'v1', kind }] });
const cidrs = arr(ref(`${META}ServerAddressByClientCIDR`), { description: 'A map of client CIDR to server address that is serving this group.' });

const SCHEMAS: Schemas = {
  [`${META}ServerAddressByClientCIDR`]: obj(strings(['clientCIDR', 'serverAddress']), {
    description: 'ServerAddressByClientCIDR helps the client to determine the server address that they should use, depending on the clientCIDR that they match.',
    required: ['clientCIDR', 'serverAddress'],
  }),
  [`${META}GroupVersionForDiscovery`]: obj(strings(['groupVersion', 'version']), {
    description: 'GroupVersion contains the "group/version" and "version" string of a version.',
    required: ['groupVersion', 'version'],
  }),
  [`${META}APIVersions`]: obj(
    { ...typeMeta, serverAddressByClientCIDRs: cidrs, versions: arr(str(), { description: 'versions are the api versions that are available.' }) },
    { description: 'APIVersions lists the versions that are available, to allow clients to discover the API at /api.', required: ['versions', 'serverAddressByClientCIDRs'], ...gvk('APIVersions') },
  ),
  [`${META}APIGroup`]: obj(
    {
      ...typeMeta,
      name: str('name is the name of the group.'),
      preferredVersion: ref(`${META}GroupVersionForDiscovery`, 'preferredVersion is the version preferred by the API server.'),
      serverAddressByClientCIDRs: cidrs,
      versions: arr(ref(`${META}GroupVersionForDiscovery`), { description: 'versions are the versions supported in this group.' }),
    },
    { description: 'APIGroup contains the name, the supported versions, and the preferred version of a group.', required: ['name', 'versions'], ...gvk('APIGroup') },
  ),
  [`${META}APIGroupList`]: obj(
    { ...typeMeta, groups: arr(ref(`${META}APIGroup`), { description: 'groups is a list of APIGroup.' }) },
    { description: 'APIGroupList is a list of APIGroup, to allow clients to discover the API at /apis.', required: ['groups'], ...gvk('APIGroupList') },
  ),
  [VERSION_INFO]: obj(strings(['buildDate', 'compiler', 'gitCommit', 'gitTreeState', 'gitVersion', 'goVersion', 'major', 'minor', 'platform']), {
    description: 'Info contains versioning information.',
    required: ['major', 'minor', 'gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform'],
  }),
};

/** The names `name` references, itself included, among SCHEMAS. */
function closure(name: string, into = new Set<string>()): Set<string> {
  if (into.has(name)) return into;
  into.add(name);
  for (const m of JSON.stringify(SCHEMAS[name]).matchAll(/#\/components\/schemas\/([^"]+)/g)) closure(m[1] ?? '', into);
  return into;
}

interface Endpoint {
  path: string;
  tag: string;
  description: string;
  operationId: string;
  /** The schema of the answer; none: a string. */
  returns?: string;
  contentType?: string;
}

function endpointDoc(e: Endpoint): { paths: Schema; schemas: Schemas } {
  const get = {
    tags: [e.tag],
    description: e.description,
    operationId: e.operationId,
    responses: {
      '200': { description: 'OK', content: { [e.contentType ?? 'application/json']: { schema: e.returns ? ref(e.returns) : str() } } },
      '401': { description: 'Unauthorized' },
    },
  };
  const names = e.returns ? [...closure(e.returns)].sort() : [];
  return { paths: { [e.path]: { get } }, schemas: Object.fromEntries(names.map((n) => [n, SCHEMAS[n] as Schema])) };
}

/** A group's name as its operations and tags spell it: `rbac.authorization.k8s.io` is rbacAuthorization. */
function groupStem(group: string): string {
  return group
    .replace(/\.k8s\.io$/, '')
    .split('.')
    .map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1)))
    .join('');
}

/** The endpoint documented at `/openapi/v3/<path>`, if it is one of these. */
function endpointAt(path: string): Endpoint | undefined {
  if (path === 'api') return { path: '/api/', tag: 'core', description: 'get available API versions', operationId: 'getCoreAPIVersions', returns: `${META}APIVersions` };
  if (path === 'apis') return { path: '/apis/', tag: 'apis', description: 'get available API versions', operationId: 'getAPIVersions', returns: `${META}APIGroupList` };
  if (path === '.well-known/openid-configuration') {
    const description = "get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'";
    return { path: '/.well-known/openid-configuration/', tag: 'WellKnown', description, operationId: 'getServiceAccountIssuerOpenIDConfiguration' };
  }
  if (path === 'openid/v1/jwks') {
    const description = 'get service account issuer OpenID JSON Web Key Set (contains public token verification keys)';
    return { path: '/openid/v1/jwks/', tag: 'openid', description, operationId: 'getServiceAccountIssuerOpenIDKeyset', contentType: 'application/jwk-set+json' };
  }
  if (path === 'version') {
    return { path: '/version/', tag: 'version', description: 'get the version information for this server', operationId: 'getCodeVersion', returns: VERSION_INFO };
  }
  const group = /^apis\/([^/]+)$/.exec(path)?.[1];
  if (group === undefined || !findGroup(group)) return undefined;
  const stem = groupStem(group);
  const operationId = `get${stem.charAt(0).toUpperCase()}${stem.slice(1)}APIGroup`;
  return { path: `/apis/${group}/`, tag: stem, description: 'get information of a group', operationId, returns: `${META}APIGroup` };
}

/** The paths of these documents in the index: `api`, `apis`, one per named group, `version` and the issuer's. */
export function discoveryDocPaths(): string[] {
  const groups = GROUPS.filter((g) => g.name !== '').map((g) => `apis/${g.name}`);
  return ['.well-known/openid-configuration', 'api', 'apis', ...groups, 'openid/v1/jwks', 'version'];
}

/** The `paths` and component schemas of the document at `/openapi/v3/<path>`, or undefined. */
export function discoveryDoc(path: string): { paths: Schema; schemas: Schemas } | undefined {
  const e = endpointAt(path);
  return e && endpointDoc(e);
}
