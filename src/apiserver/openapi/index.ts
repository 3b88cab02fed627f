/**
 * OpenAPI v3 as kube-apiserver publishes it: an index of documents addressed with a content hash
 * (kubectl caches documents by that hash), one per served group-version and one per discovery endpoint.
 * Also the schema lookups the server uses for strict field validation.
 */
import { createHash } from 'node:crypto';
import { GROUPS, findGroupVersion, type GroupVersionResources } from '../../api/groups.js';
import { KUBE_GIT_VERSION } from '../../api/kube-level.js';
import { type GVK, META } from './builder.js';
import { discoveryDoc, discoveryDocPaths } from './discovery-docs.js';
import { pathsFor } from './paths.js';
import { ALL_SCHEMAS, reachable, schemaNameFor } from './schemas.js';

export { schemaFor } from './schema-for.js';

export interface OpenApiDocument {
  body: string;
  /** Upper-case hex SHA-512 of body, the `hash` query value of its URL. */
  hash: string;
}

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

function kindsOf(gv: GroupVersionResources): GVK[] {
  return gv.resources.flatMap((r) => [
    { group: r.group, version: r.version, kind: r.kind },
    ...(r.verbs.includes('list') ? [{ group: r.group, version: r.version, kind: r.listKind }] : []),
    ...(r.subresources ?? []).map((s) => ({ group: s.group, version: s.version, kind: s.kind })),
  ]);
}

function finish(paths: unknown, schemas: Record<string, unknown>): OpenApiDocument {
  const doc = { openapi: '3.0.0', info: { title: 'Kubernetes', version: KUBE_GIT_VERSION }, paths, components: { schemas } };
  const body = JSON.stringify(doc);
  return { body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() };
}

function build(gv: GroupVersionResources): OpenApiDocument {
  const roots = kindsOf(gv)
    .map(schemaNameFor)
    .filter((n): n is string => n !== undefined);
  const names = [...reachable([...roots, `${META}Status`, `${META}DeleteOptions`, `${META}Patch`, `${META}WatchEvent`])].sort();
  return finish(pathsFor(gv), Object.fromEntries(names.map((n) => [n, ALL_SCHEMAS[n]])));
}

const DOCS = new Map<string, OpenApiDocument>();

/**
 * The document at `/openapi/v3/<path>`, built once: a served group-version's (`api/v1`,
 * `apis/<group>/<version>`) or a discovery endpoint's (discovery-docs.ts); undefined for anything else.
 */
export function openApiV3Document(path: string): OpenApiDocument | undefined {
  const cached = DOCS.get(path);
  if (cached) return cached;
  const m = /^(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  const gv = m ? findGroupVersion(m[2] ?? '', m[1] ?? m[3] ?? '') : undefined;
  const discovery = gv ? undefined : discoveryDoc(path);
  const doc = gv ? build(gv) : discovery && finish(discovery.paths, discovery.schemas);
  if (doc) DOCS.set(path, doc);
  return doc;
}

/** `GET /openapi/v3`: every document with its hashed URL, in path order as kube-apiserver's (a Go map). */
export function openApiV3Index(): { paths: Record<string, { serverRelativeURL: string }> } {
  const gvPaths = GROUPS.flatMap((g) => g.versions.map((v) => gvPath(g.name, v.version)));
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const p of [...gvPaths, ...discoveryDocPaths()].sort()) {
    const doc = openApiV3Document(p);
    if (doc) paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${doc.hash}` };
  }
  return { paths };
}
