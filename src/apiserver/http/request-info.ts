/**
 * Turns a request URL into upstream's RequestInfo: whether it addresses a resource, and which
 * verb, group, version, namespace, resource, name and subresource. Authorization and routing
 * both read it, so they can never disagree about what a request touches.
 */
import { errors } from './errors.js';
import { queryBool } from './query-params.js';

export interface RequestInfo {
  isResourceRequest: boolean;
  /** The percent-decoded path, as Go's `URL.Path`: what non-resource authorization and routes match. */
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

/*
 * Both builders below give every RequestInfo all its fields, in one order (absent ones undefined):
 * one hidden class, so the stages that read a request's info (metrics, flow control, authorization,
 * routing, audit) meet one shape rather than one per combination of optional fields.
 */

function nonResource(path: string, method: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: undefined,
    apiGroup: '',
    apiVersion: '',
    namespace: undefined,
    resource: '',
    subresource: undefined,
    name: undefined,
    legacyWatch: false,
    collection: false,
  };
}

function isWatchParam(query: URLSearchParams): boolean {
  return queryBool(query, 'watch') ?? false;
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

/** The API root of a resource URL: `/api/{version}/...` or `/apis/{group}/{version}/...`. */
interface ApiRoot {
  apiPrefix: 'api' | 'apis';
  apiGroup: string;
  apiVersion: string;
  /** Where the segments after the version start. */
  rest: number;
}

/** Splits off the API root; undefined when the path is not under one or too short to name a resource. */
function splitApiRoot(parts: string[]): ApiRoot | undefined {
  const prefix = parts[0];
  if (prefix === 'api') {
    if (parts.length < 3) return undefined;
    return { apiPrefix: prefix, apiGroup: '', apiVersion: parts[1] ?? '', rest: 2 };
  }
  if (prefix === 'apis') {
    if (parts.length < 4) return undefined;
    return { apiPrefix: prefix, apiGroup: parts[1] ?? '', apiVersion: parts[2] ?? '', rest: 3 };
  }
  return undefined;
}

/** What the segments after the version address. */
interface ResourcePath {
  legacyWatch: boolean;
  namespace: string | undefined;
  resource: string;
  name: string | undefined;
  subresource: string | undefined;
}

/**
 * Reads `[watch/][namespaces/{ns}/]{resource}[/{name}[/{subresource}]]` from `segments[at]` on;
 * undefined when the path has more segments than that. `/namespaces/{name}/status|finalize`
 * address the namespace itself.
 */
function splitResourcePath(segments: string[], at: number): ResourcePath | undefined {
  let i = at;
  const legacyWatch = segments[i] === 'watch';
  if (legacyWatch) {
    i++;
    if (i === segments.length) return undefined;
  }
  let namespace: string | undefined;
  if (segments[i] === 'namespaces' && segments.length - i > 1) {
    namespace = segments[i + 1];
    if (segments.length - i > 2 && !NAMESPACE_SUBRESOURCES.has(segments[i + 2] ?? '')) i += 2;
  }
  if (segments.length - i > 3) return undefined;
  return { legacyWatch, namespace, resource: segments[i] ?? '', name: segments[i + 1], subresource: segments[i + 2] };
}

/** The Kubernetes verb: the method's, except that collection GETs list or watch and collection DELETEs deletecollection. */
function resourceVerb(method: string, target: ResourcePath, query: URLSearchParams): string {
  const verb = METHOD_VERBS[method] ?? method.toLowerCase();
  if (target.legacyWatch) return 'watch';
  if (target.name === undefined && verb === 'get') return isWatchParam(query) ? 'watch' : 'list';
  if (target.name === undefined && verb === 'delete') return 'deletecollection';
  return verb;
}

const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/** Whether unescapePath changes `s`: it has a `%` escape or a byte beyond ASCII. */
const hasEscapes = (s: string): boolean => /[%\u0080-\u00ff]/.test(s);

/**
 * Go's url.PathUnescape: `%XX` becomes the byte XX (once: `%253A` is `%3A`), `+` stays `+`, and a
 * `%` not followed by two hex digits is `invalid URL escape "%zz"`, which Go's server answers with
 * 400 before any handler runs.
 */
export function unescapePath(s: string): string {
  if (!hasEscapes(s)) return s;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '%') {
      // Node reads the request line as latin1: each char is one byte as the client sent it.
      bytes.push(s.charCodeAt(i) & 0xff);
      continue;
    }
    if (!isHex(s.charCodeAt(i + 1)) || !isHex(s.charCodeAt(i + 2))) {
      throw errors.badRequest(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
    }
    bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
    i += 2;
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * The path of a request target as the client sent it, not `URL.pathname`: WHATWG URLs resolve
 * `..` and `%2e%2e` segments, Go's server does not.
 */
export function requestPath(target = '/'): string {
  if (target.startsWith('/')) {
    const q = target.indexOf('?');
    return q < 0 ? target : target.slice(0, q);
  }
  return new URL(target, 'https://localhost').pathname;
}

export interface RequestQuery {
  /** `?…` or empty, as URL's `search`. */
  search: string;
  params: URLSearchParams;
}

/**
 * The query of a request target as `new URL(target)`'s `search` and `searchParams` give it, without
 * parsing a whole URL for every request (2-3% of a GET's CPU).
 */
export function requestQuery(target = '/'): RequestQuery {
  if (!target.startsWith('/')) {
    const url = new URL(target, 'https://localhost');
    return { search: url.search, params: url.searchParams };
  }
  const q = target.indexOf('?');
  if (q < 0) return { search: '', params: new URLSearchParams() };
  const fragment = target.indexOf('#', q);
  const search = fragment < 0 ? target.slice(q) : target.slice(q, fragment);
  return { search: search.length > 1 ? search : '', params: new URLSearchParams(search) };
}

/**
 * Reads a resource request from the path as the client sent it (not dot-normalised, not decoded):
 * each segment is decoded once after splitting on '/', so an encoded `%2F` stays inside its
 * segment (a name with '/' is then refused by the route, never read as a separator) and an
 * encoded `%2e%2e` is the name "..", never a step up.
 */
export function parseRequestInfo(method: string, rawPath: string, query: URLSearchParams): RequestInfo {
  const path = unescapePath(rawPath);
  const raw = rawPath.split('/').filter((p) => p !== '');
  // Nearly every path has no escape: then no segment has one either.
  const segments = hasEscapes(rawPath) ? raw.map(unescapePath) : raw;
  const root = splitApiRoot(segments);
  const target = root && splitResourcePath(segments, root.rest);
  if (!root || !target) return nonResource(path, method);
  const verb = resourceVerb(method, target, query);
  // A list or watch pinned to one name by its field selector is authorized as that name's.
  const name = target.name ?? (verb === 'list' || verb === 'watch' ? nameFromFieldSelector(query) : undefined);
  return {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix: root.apiPrefix,
    apiGroup: root.apiGroup,
    apiVersion: root.apiVersion,
    namespace: target.namespace,
    resource: target.resource,
    subresource: target.subresource,
    name,
    legacyWatch: target.legacyWatch,
    collection: target.name === undefined,
  };
}
