/**
 * Discovery, `/version` and OpenAPI: documents that are pure functions of the RESOURCES table. The
 * server calls serveDiscovery first for every GET and falls through to its handlers on undefined.
 */
import { createHash } from 'node:crypto';
import protobuf from 'protobufjs';
import { errors } from '../http/errors.js';
import { openApiV3Document, openApiV3Index } from '../openapi/index.js';
import { type AggregatedVersion, aggregatedContentType, aggregatedList } from './aggregated.js';
import { findGroup, findGroupVersion } from '../../api/groups.js';
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

/**
 * kubectl consults /openapi/v2 only as a fallback, when a kind has no PATCH operation in v3 (the
 * create-only reviews): a 404 there makes `kubectl create -f tokenreview.yaml` fail, while a document
 * without that kind tells it the kind does not take fieldValidation, as upstream's v2 does. So v2 is a
 * gnostic openapi_v2.Document in protobuf (kubectl accepts no other encoding) carrying only
 * `swagger` and `info`: every schema lives in v3.
 */
// kubectl asks for `...spec.v2@v1.0+protobuf`, but Go's mime parser rejects the `@` in a reply, so the
// reply names the type with a dot, as kube-apiserver's does.
const OPENAPI_V2_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const OPENAPI_V2 = ((): Buffer => {
  const info = protobuf.Writer.create().uint32(0x0a).string('Kubernetes').uint32(0x12).string(VERSION_INFO.gitVersion).finish();
  return Buffer.from(protobuf.Writer.create().uint32(0x0a).string('2.0').uint32(0x12).bytes(info).finish());
})();

function openApiV2(): DiscoveryResponse {
  return { status: 200, headers: { 'Content-Type': OPENAPI_V2_TYPE }, body: OPENAPI_V2 };
}

function openApi(path: string, ifNoneMatch?: string): DiscoveryResponse | undefined {
  if (path === '/openapi/v2') return openApiV2();
  if (path === '/openapi/v3') return json(openApiV3Index());
  if (!path.startsWith('/openapi/v3/')) return undefined;
  const doc = openApiV3Document(path.slice('/openapi/v3/'.length));
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
