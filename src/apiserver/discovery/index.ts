/**
 * Discovery, `/version` and OpenAPI: documents that are pure functions of the RESOURCES table. The
 * server calls serveDiscovery first for every GET and falls through to its handlers on undefined.
 */
import { createHash } from 'node:crypto';
import { errors } from '../errors.js';
import { openApiV3Document, openApiV3Index } from '../openapi/index.js';
import { type AggregatedVersion, aggregatedContentType, aggregatedList } from './aggregated.js';
import { findGroup, findGroupVersion } from './groups.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions } from './legacy.js';
import { negotiateAggregated } from './negotiate.js';
import { VERSION_INFO } from './version.js';

export interface DiscoveryRequest {
  /** The URL path; a query string, if present, is ignored except for OpenAPI's `hash`. */
  path: string;
  accept: string;
  /** The If-None-Match header, for 304 answers on ETag-bearing documents. */
  ifNoneMatch?: string;
  /** `host:port` as the client addressed the server, for APIVersions.serverAddressByClientCIDRs. */
  host?: string;
}

export interface DiscoveryResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

const JSON_TYPE = 'application/json';

function json(doc: unknown, contentType = JSON_TYPE, extra: Record<string, string> = {}): DiscoveryResponse {
  return { status: 200, headers: { 'Content-Type': contentType, ...extra }, body: JSON.stringify(doc) };
}

/** Quoted upper-case hex SHA-512, as upstream's aggregated discovery and OpenAPI handlers compute it. */
export function etagOf(body: string): string {
  return `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"`;
}

function withEtag(res: DiscoveryResponse, ifNoneMatch: string | undefined): DiscoveryResponse {
  const etag = etagOf(String(res.body));
  const headers = { ...res.headers, ETag: etag, Vary: 'Accept', 'Cache-Control': 'public' };
  if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((t) => t.trim() === etag)) {
    return { status: 304, headers, body: '' };
  }
  return { ...res, headers };
}

function aggregated(root: 'api' | 'apis', version: AggregatedVersion, ifNoneMatch?: string): DiscoveryResponse {
  return withEtag(json(aggregatedList(root, version), aggregatedContentType(version)), ifNoneMatch);
}

function notFound(): DiscoveryResponse {
  return { status: 404, headers: { 'Content-Type': JSON_TYPE }, body: JSON.stringify(errors.pathNotFound().toStatus()) };
}

function openApi(path: string, ifNoneMatch?: string): DiscoveryResponse | undefined {
  if (path === '/openapi/v2') return notFound();
  if (path === '/openapi/v3') return json(openApiV3Index());
  const m = /^\/openapi\/v3\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (!m) return undefined;
  const doc = m[1] ? openApiV3Document('', m[1]) : openApiV3Document(m[2] ?? '', m[3] ?? '');
  if (!doc) return notFound();
  return withEtag({ status: 200, headers: { 'Content-Type': JSON_TYPE }, body: doc.body }, ifNoneMatch);
}

/** Answers a discovery, version or OpenAPI GET, or returns undefined when the path is none of them. */
export function serveDiscovery(req: DiscoveryRequest): DiscoveryResponse | undefined {
  const path = (req.path.split('?')[0] ?? '').replace(/\/+$/, '') || '/';
  const agg = negotiateAggregated(req.accept);
  if (path === '/version') return json(VERSION_INFO);
  if (path === '/api') return agg ? aggregated('api', agg, req.ifNoneMatch) : json(apiVersions(req.host));
  if (path === '/apis') return agg ? aggregated('apis', agg, req.ifNoneMatch) : json(apiGroupList());
  if (path.startsWith('/openapi/')) return openApi(path, req.ifNoneMatch);
  return groupDocument(path);
}

/** `/api/v1`, `/apis/<group>` and `/apis/<group>/<version>` (legacy documents). */
function groupDocument(path: string): DiscoveryResponse | undefined {
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)(?:\/([^/]+))?)$/.exec(path);
  if (!m) return undefined;
  if (m[1]) {
    const core = findGroupVersion('', m[1]);
    return core ? json(apiResourceList(core)) : undefined;
  }
  if (m[3] === undefined) {
    const g = findGroup(m[2] ?? '');
    return g ? json(apiGroup(g)) : undefined;
  }
  const gv = findGroupVersion(m[2] ?? '', m[3]);
  return gv ? json(apiResourceList(gv)) : undefined;
}
