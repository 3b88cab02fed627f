/**
 * Turns a request URL into upstream's RequestInfo: whether it addresses a resource, and which
 * verb, group, version, namespace, resource, name and subresource. Authorization and routing
 * both read it, so they can never disagree about what a request touches.
 */

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection (resources) or the lowercase method. */
  verb: string;
  apiPrefix?: 'api' | 'apis';
  apiGroup: string;
  apiVersion: string;
  namespace?: string;
  resource: string;
  subresource?: string;
  name?: string;
  /** The legacy `/watch/` path prefix was used. */
  legacyWatch: boolean;
  /** The URL names no object (a list, watch, create or deletecollection target). */
  collection: boolean;
}

/** Namespace subresources upstream treats as part of the namespaces resource itself. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const METHOD_VERBS: Record<string, string> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

function nonResource(path: string, method: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    resource: '',
    legacyWatch: false,
    collection: false,
  };
}

function isWatchParam(query: URLSearchParams): boolean {
  const w = query.get('watch');
  return w === 'true' || w === '1';
}

/** The name a `metadata.name=<n>` field selector pins a list or watch to, if any. */
function nameFromFieldSelector(query: URLSearchParams): string | undefined {
  const selector = query.get('fieldSelector');
  if (!selector) return undefined;
  for (const part of selector.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(part);
    if (m && m[1] !== undefined && m[1] !== '') return m[1];
  }
  return undefined;
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = path.split('/').filter((p) => p !== '');
  const prefix = parts[0];
  if (prefix !== 'api' && prefix !== 'apis') return nonResource(path, method);
  let rest: string[];
  let apiGroup = '';
  let apiVersion: string;
  if (prefix === 'api') {
    if (parts.length < 3) return nonResource(path, method);
    apiVersion = parts[1] ?? '';
    rest = parts.slice(2);
  } else {
    if (parts.length < 4) return nonResource(path, method);
    apiGroup = parts[1] ?? '';
    apiVersion = parts[2] ?? '';
    rest = parts.slice(3);
  }
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
    if (rest.length === 0) return nonResource(path, method);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] ?? '')) rest = rest.slice(2);
  }
  const resource = rest[0] ?? '';
  const name = rest[1];
  const subresource = rest[2];
  if (rest.length > 3) return nonResource(path, method);

  let verb = METHOD_VERBS[method] ?? method.toLowerCase();
  if (legacyWatch) verb = 'watch';
  else if (name === undefined && verb === 'get') verb = isWatchParam(query) ? 'watch' : 'list';
  else if (name === undefined && verb === 'delete') verb = 'deletecollection';

  const info: RequestInfo = {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix: prefix,
    apiGroup,
    apiVersion,
    resource,
    legacyWatch,
    collection: name === undefined,
  };
  if (namespace !== undefined) info.namespace = namespace;
  if (subresource !== undefined) info.subresource = subresource;
  if (name !== undefined) info.name = name;
  else if (verb === 'list' || verb === 'watch') {
    const pinned = nameFromFieldSelector(query);
    if (pinned !== undefined) info.name = pinned;
  }
  return info;
}
